package cli

import "errors"

func cmdTunnel(p *Process, args []string) error { return errors.New("tunnel: not built yet") }
