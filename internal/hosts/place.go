package hosts

import (
	"context"
	"fmt"
	"strings"
)

// Place is where a host's commands run on its machine: the kernel (its boot id, one per
// boot of one machine), the /run they see (device and inode: namespaces of one machine
// share it unless they mount their own) and their network stack (the network namespace).
// Two inventory hosts with the same Boot are one machine.
type Place struct {
	Boot, Run, Net string
}

// placeScript prints the boot id, /run's device:inode and the network namespace, a line
// each. It reads and changes nothing else.
const placeScript = `cat /proc/sys/kernel/random/boot_id; stat -L -c %d:%i /run; readlink /proc/self/ns/net`

// ReadPlace reads h's Place. A host that prints nothing (a dry run's) has the zero Place.
func ReadPlace(ctx context.Context, h Host) (Place, error) {
	out, err := h.Run(ctx, "sh", "-c", placeScript)
	if err != nil {
		return Place{}, fmt.Errorf("host %s: read which machine it is: %w", h.Name(), err)
	}
	f := strings.Fields(string(out))
	if len(f) == 0 {
		return Place{}, nil
	}
	if len(f) != 3 {
		return Place{}, fmt.Errorf("host %s: read which machine it is: want the boot id, /run's device:inode and the network namespace, got %q", h.Name(), out)
	}
	return Place{Boot: f[0], Run: f[1], Net: f[2]}, nil
}

// Known says whether p was read (a dry run's host has none).
func (p Place) Known() bool { return p.Boot != "" }

// SharesRun says whether p and q are one machine's and see one /run.
func (p Place) SharesRun(q Place) bool { return p.Known() && p.Boot == q.Boot && p.Run == q.Run }

// SharesNet says whether p and q are one network stack of one machine.
func (p Place) SharesNet(q Place) bool { return p.Known() && p.Boot == q.Boot && p.Net == q.Net }
