package cli

import "errors"

func cmdDown(p *Process, args []string) error { return errors.New("down: not built yet") }
