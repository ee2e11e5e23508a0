// Package main implements function-worker-image, a Crossplane composition
// function that boots tenant Talos worker disks from shared golden images.
package main

import (
	"time"

	"github.com/alecthomas/kong"

	"github.com/crossplane/function-sdk-go"
)

// CLI of this function. The flags follow the Crossplane function
// specification and crossplane/function-template-go.
type CLI struct {
	Debug bool `help:"Emit debug logs in addition to info logs." short:"d"`

	Network            string        `default:"tcp"   help:"Network on which to listen for gRPC connections."`
	Address            string        `default:":9443" help:"Address at which to listen for gRPC connections."`
	TLSCertsDir        string        `env:"TLS_SERVER_CERTS_DIR" help:"Directory containing server certs (tls.key, tls.crt) and the CA used to verify client certificates (ca.crt)"`
	Insecure           bool          `help:"Run without mTLS credentials. If you supply this flag --tls-certs-dir will be ignored."`
	MaxRecvMessageSize int           `default:"4"     help:"Maximum size of received messages in MB."`
	MetricsAddress     string        `default:":8080" help:"Address of the Prometheus metrics server; empty disables it."`
	TTL                time.Duration `default:"1m"    help:"Response TTL when the Input sets none: how soon Crossplane calls again in steady state."`
}

// Run this function.
func (c *CLI) Run() error {
	log, err := function.NewLogger(c.Debug)
	if err != nil {
		return err
	}

	return function.Serve(NewFunction(log, c.TTL),
		function.Listen(c.Network, c.Address),
		function.MTLSCertificates(c.TLSCertsDir),
		function.Insecure(c.Insecure),
		function.MaxRecvMessageSize(c.MaxRecvMessageSize*1024*1024),
		function.WithMetricsServer(c.MetricsAddress))
}

func main() {
	ctx := kong.Parse(&CLI{}, kong.Description("A Crossplane composition function that boots Talos worker disks as CDI clones of shared golden images."))
	ctx.FatalIfErrorf(ctx.Run())
}
