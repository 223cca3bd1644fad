package cli

import "errors"

func cmdDelayer(p *Process, args []string) error { return errors.New("delayer: not built yet") }
