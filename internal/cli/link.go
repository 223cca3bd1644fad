package cli

import "errors"

func cmdLink(p *Process, args []string) error { return errors.New("link: not built yet") }
