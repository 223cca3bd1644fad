package dbserver

import (
	"fmt"
	"path/filepath"
	"strings"
)

// MaxSocketPath is sun_path's size on Linux minus the terminating NUL: the longest unix
// socket path a server can listen on.
const MaxSocketPath = 107

// Config is what every engine checks of its server's configuration before anything is
// written: the parts their Config types share.
type Config struct {
	Engine string // names the config in errors: "mariadb", "postgres"
	Dir    string // the server's base directory: absolute
	Bind   string // listen addresses, comma separated: at least one
	Port   int
	Socket string // the unix socket's path, which must fit sun_path
	// Extra are settings added to the server's file, one line each; a key with one of
	// BadKeyChars is refused too.
	Extra       map[string]string
	BadKeyChars string
}

// Check returns the first thing wrong with c, named in the engine's words.
func (c Config) Check() error {
	switch {
	case c.Dir == "" || !filepath.IsAbs(c.Dir):
		return fmt.Errorf("%s config: Dir must be an absolute path, got %q", c.Engine, c.Dir)
	case strings.TrimSpace(strings.ReplaceAll(c.Bind, ",", "")) == "":
		return fmt.Errorf("%s config: BindAddress is required", c.Engine)
	case c.Port < 1 || c.Port > 65535:
		return fmt.Errorf("%s config: port %d out of range", c.Engine, c.Port)
	case len(c.Socket) > MaxSocketPath:
		return fmt.Errorf("%s config: socket path %q is longer than %d bytes; use a shorter Dir",
			c.Engine, c.Socket, MaxSocketPath)
	}
	for k, v := range c.Extra {
		if strings.ContainsAny(k+v, "\n\r") || strings.TrimSpace(k) == "" || strings.ContainsAny(k, c.BadKeyChars) {
			return fmt.Errorf("%s config: bad extra setting %q=%q", c.Engine, k, v)
		}
	}
	return nil
}
