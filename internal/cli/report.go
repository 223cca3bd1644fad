package cli

import "errors"

func cmdReport(p *Process, args []string) error { return errors.New("report: not built yet") }
