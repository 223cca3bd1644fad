// Command wirelab builds a lab of network namespaces with a shaped wire, runs real MariaDB
// and sysbench across it, and reports how the network shapes database throughput.
package main

import (
	"os"

	"github.com/wirelab/wirelab/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], cli.NewProcess())) }
