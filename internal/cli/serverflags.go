package cli

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/sysbench"
)

// serverPasswordEnv holds an existing server's password: never in the DSN, where shell
// history, ps and results.json would keep it.
const serverPasswordEnv = "WIRELAB_SERVER_PASSWORD"

// serverFlags measure an existing MySQL/MariaDB server instead of one the lab starts. Every
// bench command has them, so that the ones that cannot use them refuse them by name.
type serverFlags struct {
	fs                          *flag.FlagSet
	dsn, passwordFile, certsDir *string
}

func addServerFlags(fs *flag.FlagSet) *serverFlags {
	return &serverFlags{fs: fs,
		dsn: fs.String("server-dsn", "", "measure an existing MySQL/MariaDB server instead of starting one: "+engine.DSNForm+
			" (go-sql-driver/mysql's form, no password: $"+serverPasswordEnv+" or --server-password-file). "+
			"The lab routes to it through its wire; its CPU is not measured"),
		passwordFile: fs.String("server-password-file", "", "file holding the --server-dsn user's password (instead of $"+serverPasswordEnv+")"),
		certsDir: fs.String("server-tls-dir", "", "with --server-dsn and --tls: a directory with the server's CA as cacert.pem and a "+
			"client-cert.pem + client-key.pem it trusts (sysbench 1.0.20 checks both ways)"),
	}
}

// named is the first of the server flags the user gave, "" if none.
func (f *serverFlags) named() string {
	for _, n := range []string{"server-dsn", "server-password-file", "server-tls-dir"} {
		if given(f.fs, n) {
			return n
		}
	}
	return ""
}

// refuse is a usage error naming the server flag given to a command that cannot use it,
// and why; nil when none was given.
func (f *serverFlags) refuse(cmd, why string) error {
	if n := f.named(); n != "" {
		return usagef("%s: --%s does not apply: %s; drop it", cmd, n, why)
	}
	return nil
}

// config validates the flags into how to reach the server, without contacting it (nil
// when --server-dsn is not given); every problem is a usage error naming the flag. tls
// says whether any point uses TLS.
func (f *serverFlags) config(p *Process, kind engine.Kind, tls bool) (*engine.ExternalConfig, error) {
	if *f.dsn == "" {
		if n := f.named(); n != "" {
			return nil, usagef("--%s applies only with --server-dsn", n)
		}
		return nil, nil
	}
	if kind != engine.MariaDB {
		return nil, usagef("--server-dsn names a MySQL/MariaDB server (%s); drop --engine %s", engine.DSNForm, kind)
	}
	if given(f.fs, "buffer-pool") {
		return nil, usagef("--buffer-pool sizes a server wirelab starts; the --server-dsn server keeps its own: drop it")
	}
	dsn, err := engine.ParseDSN(*f.dsn)
	if errors.Is(err, engine.ErrDSNPassword) {
		return nil, usagef("--server-dsn: %v; remove it and export %s or give --server-password-file", err, serverPasswordEnv)
	}
	if err != nil {
		return nil, usagef("--server-dsn: %v", err)
	}
	ip, err := lab.OutsideAddr(dsn.Host)
	if err != nil {
		return nil, usagef("--server-dsn %s: %v", dsn, err)
	}
	cfg := &engine.ExternalConfig{DSN: dsn, IP: ip, Timeout: 5 * time.Second}
	if cfg.Password, cfg.PasswordFrom, err = f.password(p); err != nil {
		return nil, err
	}
	if err := sysbench.CheckHideable(cfg.Password); err != nil {
		return nil, usagef("--server-dsn (password from %s): %v", cfg.PasswordFrom, err)
	}
	if cfg.CertDir, err = f.tlsDir(tls); err != nil {
		return nil, err
	}
	return cfg, nil
}

// password reads the password from exactly one of its two places.
func (f *serverFlags) password(p *Process) (pw, from string, err error) {
	env := p.env(serverPasswordEnv)
	switch {
	case *f.passwordFile != "" && env != "":
		return "", "", usagef("--server-password-file and $%s are both set: use one", serverPasswordEnv)
	case *f.passwordFile != "":
		pw, err := engine.ReadPasswordFile(*f.passwordFile)
		if err != nil {
			return "", "", usagef("--server-password-file: %v", err)
		}
		return pw, "--server-password-file " + *f.passwordFile, nil
	case env != "":
		return env, "$" + serverPasswordEnv, nil
	}
	return "", "", usagef("--server-dsn: no password: export %s or give --server-password-file (an empty file for a user without one)", serverPasswordEnv)
}

// tlsDir is --server-tls-dir, checked: required with TLS, refused without it.
func (f *serverFlags) tlsDir(tls bool) (string, error) {
	dir := *f.certsDir
	switch {
	case tls && dir == "":
		return "", usagef("--tls with --server-dsn needs --server-tls-dir: a directory with the server's CA as cacert.pem and a client-cert.pem + client-key.pem the server trusts (sysbench 1.0.20 checks the server's certificate and shows its own)")
	case !tls && dir != "":
		return "", usagef("--server-tls-dir applies only where a point uses TLS (--tls; n3 in study bandwidth)")
	case !tls:
		return "", nil
	}
	for _, name := range sysbench.TLSFiles {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return "", usagef("--server-tls-dir %s: %v; want cacert.pem (the server's CA), client-cert.pem and client-key.pem", dir, err)
		}
	}
	return dir, nil
}
