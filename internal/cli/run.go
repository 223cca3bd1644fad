package cli

import "errors"

func cmdRun(p *Process, args []string) error { return errors.New("run: not built yet") }
