package galera

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// MaxRTTLimit is the largest round trip a cluster accepts: the derived gcomm timeouts
// grow with the RTT (see Timeouts), and beyond a few seconds a node that really died
// would take minutes to be noticed.
const MaxRTTLimit = 5 * time.Second

// The send window the tuned preset uses: 512 messages in flight for the group and for
// user (transaction) messages, the setting Percona measured to win back throughput
// across a WAN (galera's defaults are 4 and 2).
const TunedSendWindow = 512

// Options are the cluster's settings. The zero value is galera's defaults at an RTT of 0;
// set MaxRTT to the largest RTT the caller will shape.
type Options struct {
	// MaxRTT is the largest round trip the wire between the nodes will have while the
	// cluster runs; the gcomm timeouts are derived from it (Timeouts) and CheckRTT refuses
	// a larger one. 0 to MaxRTTLimit.
	MaxRTT time.Duration
	// SendWindow and UserSendWindow are evs.send_window and evs.user_send_window: how many
	// messages (all / transaction messages) a node may have in flight unacknowledged.
	// 0 = galera's default (4 and 2). UserSendWindow may not exceed SendWindow.
	SendWindow, UserSendWindow int
	// FCLimit is gcs.fc_limit: the replica's receive queue length (write sets) at which it
	// asks the cluster to pause (flow control). 0 = galera's default (16).
	FCLimit int
	// Appliers is wsrep_slave_threads, the threads applying replicated write sets on each
	// node. 0 = MariaDB's default (1).
	Appliers int
	// BufferPool is each node's innodb_buffer_pool_size ("" = the lab's default, 1G).
	BufferPool string
	// Provider is the path of libgalera_smm.so; "" = search the Debian locations.
	Provider string
}

// Default is galera's own settings, with gcomm timeouts safe up to maxRTT.
func Default(maxRTT time.Duration) Options { return Options{MaxRTT: maxRTT} }

// Tuned is Default with the send windows raised to TunedSendWindow.
func Tuned(maxRTT time.Duration) Options {
	return Options{MaxRTT: maxRTT, SendWindow: TunedSendWindow, UserSendWindow: TunedSendWindow}
}

// Series names the settings in results: "galera" for galera's defaults, "galera-tuned"
// for anything else.
func (o Options) Series() string {
	if o.SendWindow == 0 && o.UserSendWindow == 0 && o.FCLimit == 0 && o.Appliers == 0 {
		return "galera"
	}
	return "galera-tuned"
}

// ErrBadOptions is returned by Validate, before anything starts.
var ErrBadOptions = errors.New("bad galera options")

// Galera's defaults, for the checks that compare the two windows.
const (
	defaultSendWindow     = 4
	defaultUserSendWindow = 2
)

// Validate refuses settings galera would refuse or silently change, naming the setting.
func (o Options) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrBadOptions, fmt.Sprintf(format, a...))
	}
	if o.MaxRTT < 0 || o.MaxRTT > MaxRTTLimit {
		return bad("max RTT %s: want 0 to %s (the gcomm timeouts are derived from it)", o.MaxRTT, MaxRTTLimit)
	}
	for _, k := range []struct {
		name string
		v    int
	}{{"evs.send_window", o.SendWindow}, {"evs.user_send_window", o.UserSendWindow},
		{"gcs.fc_limit", o.FCLimit}, {"wsrep_slave_threads", o.Appliers}} {
		if k.v < 0 {
			return bad("%s %d: want a positive number, or 0 for the default", k.name, k.v)
		}
	}
	send, user := o.SendWindow, o.UserSendWindow
	if send == 0 {
		send = defaultSendWindow
	}
	if user == 0 {
		user = defaultUserSendWindow
	}
	if user > send {
		return bad("evs.user_send_window %d is above evs.send_window %d: galera wants user ≤ send", user, send)
	}
	if o.Appliers > 512 {
		return bad("wsrep_slave_threads %d: want at most 512", o.Appliers)
	}
	if strings.ContainsAny(o.Provider, ";\"\n") {
		return bad("provider path %q has a character my.cnf cannot carry", o.Provider)
	}
	return nil
}

// Timeouts are the gcomm (EVS) timers of the cluster.
type Timeouts struct {
	// KeepalivePeriod: an idle node sends a keepalive this often.
	KeepalivePeriod time.Duration
	// SuspectTimeout: a node silent this long is suspected; when all agree it is dropped.
	SuspectTimeout time.Duration
	// InactiveTimeout: a node silent this long is dropped whatever the others say.
	InactiveTimeout time.Duration
	// InstallTimeout: how long a new membership may take to install.
	InstallTimeout time.Duration
	// PeerTimeout (gmcast.peer_timeout): how long a connection handshake may take.
	PeerTimeout time.Duration
}

// rttMargin is how many round trips each silence timeout spans at least: a keepalive
// delayed by a full RTT plus retransmissions must never look like a dead node.
const rttMargin = 10

// Timeouts derives the timers from MaxRTT: galera's defaults (1 s, 5 s, 15 s, 7.5 s, 3 s)
// while they span rttMargin round trips, else rttMargin RTTs for the suspect and peer
// timeouts, three times that to drop a node, half that to install a view (galera's own
// proportions).
func (o Options) Timeouts() Timeouts {
	r := o.MaxRTT
	t := Timeouts{
		KeepalivePeriod: time.Second,
		SuspectTimeout:  max(5*time.Second, rttMargin*r),
		PeerTimeout:     max(3*time.Second, rttMargin*r),
	}
	t.InactiveTimeout = max(15*time.Second, 3*t.SuspectTimeout)
	t.InstallTimeout = t.InactiveTimeout / 2
	return t
}

// ErrRTTAboveTimeouts is returned by CheckRTT for an RTT the cluster was not set up for.
var ErrRTTAboveTimeouts = errors.New("RTT above what the galera timeouts were set for")

// CheckRTT refuses a round trip above MaxRTT: the gcomm timeouts were derived from
// MaxRTT, so a longer one could make a node suspect the other and split the cluster.
func (o Options) CheckRTT(rtt time.Duration) error {
	if rtt > o.MaxRTT {
		return fmt.Errorf("%w: the wire's RTT %s is above the %s the cluster was started for; start it with a max RTT of at least %s",
			ErrRTTAboveTimeouts, rtt, o.MaxRTT, rtt)
	}
	return nil
}

// isoDuration writes d the way galera reads durations (ISO 8601, e.g. PT7.5S).
func isoDuration(d time.Duration) string {
	return "PT" + strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "S"
}
