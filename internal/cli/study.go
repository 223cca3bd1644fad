package cli

import "errors"

func cmdStudy(p *Process, args []string) error { return errors.New("study: not built yet") }
