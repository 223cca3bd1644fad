package cli

import "errors"

func cmdDoctor(p *Process, args []string) error { return errors.New("doctor: not built yet") }
