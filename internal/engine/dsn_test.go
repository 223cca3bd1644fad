package engine

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseDSN(t *testing.T) {
	d, err := ParseDSN("bench@tcp(198.18.250.1:3307)/wl")
	if err != nil {
		t.Fatal(err)
	}
	if d != (DSN{User: "bench", Host: "198.18.250.1", Port: 3307, DB: "wl"}) || d.Addr() != "198.18.250.1:3307" {
		t.Errorf("parsed %+v", d)
	}
	if d.String() != "bench@tcp(198.18.250.1:3307)/wl" {
		t.Errorf("String %q", d.String())
	}
	if d, err := ParseDSN("bench@tcp(db.example)/wl"); err != nil || d.Port != 3306 {
		t.Errorf("default port: %+v %v", d, err)
	}
}

func TestParseDSNRefuses(t *testing.T) {
	for _, c := range []struct{ dsn, want string }{
		{"bench:s3cret@tcp(h:3306)/wl", "carries a password"},
		{"@tcp(h:3306)/wl", "no user"},
		{"bench@unix(/run/mysqld.sock)/wl", `network "unix"; want tcp`},
		{"bench@/wl", "names no address"},
		{"bench@tcp(h:3306)/", "names no database"},
		{"bench@tcp(h:3306)/wl?tls=true", "drop the ?... part"},
		{"bench@tcp(h:99999)/wl", "want 1-65535"},
		{"not a dsn", "want user@tcp(host:port)/db"},
	} {
		t.Run(c.dsn, func(t *testing.T) {
			_, err := ParseDSN(c.dsn)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %v, want %q", err, c.want)
			}
			if err != nil && strings.Contains(err.Error(), "s3cret") {
				t.Errorf("the error repeats the password: %v", err)
			}
		})
	}
	if _, err := ParseDSN("u:pw@tcp(h:1)/d"); !errors.Is(err, ErrDSNPassword) {
		t.Errorf("password: %v, want ErrDSNPassword", err)
	}
}

func TestReadPasswordFile(t *testing.T) {
	dir := t.TempDir()
	for content, want := range map[string]string{"pw1\n": "pw1", "pw 2\r\n": "pw 2", "": ""} {
		f := filepath.Join(dir, "pw")
		if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if got, err := ReadPasswordFile(f); err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", content, got, err, want)
		}
	}
	if _, err := ReadPasswordFile(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing file read fine")
	}
}
