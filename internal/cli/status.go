package cli

import "errors"

func cmdStatus(p *Process, args []string) error { return errors.New("status: not built yet") }
