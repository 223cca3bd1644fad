package cli

import "errors"

func cmdUp(p *Process, args []string) error { return errors.New("up: not built yet") }
