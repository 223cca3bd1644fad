package remote

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/flagx"
	"github.com/wirelab/wirelab/internal/inventory"
)

// serverInventory is a client and an existing server named by server (a YAML map).
func serverInventory(t *testing.T, server string) *inventory.Inventory {
	t.Helper()
	f := filepath.Join(t.TempDir(), "hosts.yaml")
	if err := os.WriteFile(f, []byte("hosts:\n  - {name: app, role: client, address: 198.18.20.1, nic: eth1, user: root}\n"+
		"  - {name: db, role: server, "+server+"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Load(f, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

func TestExistingConfig(t *testing.T) {
	env := map[string]string{"WL_PW": "s3cret", "WL_BLANK": "s3 cret"}
	getenv := func(k string) string { return env[k] }
	inv := serverInventory(t, `server: {dsn: "bench@tcp(198.18.20.2:3306)/wl", password_env: WL_PW}`)
	cfg, err := ExistingConfig(inv, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.IP != "198.18.20.2" || cfg.Password != "s3cret" || cfg.PasswordFrom != "server.password_env $WL_PW" || cfg.DSN.DB != "wl" {
		t.Errorf("config %+v", cfg)
	}
	for server, want := range map[string]string{
		`server: {dsn: "bench@tcp(198.18.20.2:3306)/wl", password_env: WL_NONE}`:                         "host db: server.password_env: $WL_NONE is empty or unset",
		`server: {dsn: "bench@tcp(198.18.20.2:3306)/wl", password_env: WL_BLANK}`:                        "(password from server.password_env $WL_BLANK): the password has a blank",
		`server: {dsn: "bench@tcp(db.invalid:3306)/wl", password_env: WL_PW}, data_address: 198.18.20.2`: "server.dsn names db.invalid, which does not resolve here",
	} {
		_, err := ExistingConfig(serverInventory(t, server), getenv)
		var ue *flagx.UsageError
		if err == nil || !strings.Contains(err.Error(), want) || !errors.As(err, &ue) {
			t.Errorf("%s: %v, want a usage error with %q", server, err, want)
		}
	}
}
