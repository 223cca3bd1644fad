package cli

import "errors"

func cmdExec(p *Process, args []string) error { return errors.New("exec: not built yet") }
