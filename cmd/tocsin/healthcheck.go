package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// healthcheck asks a running server whether it is up, for a container's
// HEALTHCHECK (a static image has no curl): exit 0 when /healthz answers
// 200, 1 with a one-line reason otherwise.
func healthcheck(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := getenv("TOCSIN_LISTEN")
	if listen == "" {
		listen = ":8080"
	}
	fs.StringVar(&listen, "listen", listen, "the address serve listens on (env TOCSIN_LISTEN); checked on loopback when its host is empty or a wildcard")
	target := fs.String("url", "", "the URL to GET instead, e.g. http://127.0.0.1:8080/healthz")
	timeout := fs.Duration("timeout", 3*time.Second, "how long to wait for the answer")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if *target == "" {
		host, port, err := net.SplitHostPort(listen)
		if err != nil {
			return fmt.Errorf("listen: %q must be host:port or :port", listen)
		}
		if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
			host = "127.0.0.1"
			if ip != nil && ip.To4() == nil {
				host = "::1"
			}
		}
		*target = "http://" + net.JoinHostPort(host, port) + "/healthz"
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, *target, nil)
	if err != nil {
		return fmt.Errorf("url: %w", err)
	}
	res, err := http.DefaultTransport.RoundTrip(req)
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("unhealthy: %s did not answer within %s", *target, *timeout)
	}
	if err != nil {
		return fmt.Errorf("unhealthy: %w", err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 4096))
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("unhealthy: %s answered %s", *target, res.Status)
	}
	fmt.Fprintln(stdout, "healthy")
	return nil
}
