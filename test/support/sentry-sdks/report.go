// Reports through Debian's sentry-go 0.11 (test/sentry-sdks.test.ts): three identical errors, then one message.
package main

import (
	"errors"
	"os"
	"time"

	"github.com/getsentry/sentry-go"
)

func chargeCard() error {
	return errors.New("card declined")
}

func main() {
	err := sentry.Init(sentry.ClientOptions{Dsn: os.Getenv("SENTRY_DSN"), ServerName: "go-host", Release: "shop@1.2.3", Environment: "test"})
	if err != nil {
		panic(err)
	}
	sentry.ConfigureScope(func(scope *sentry.Scope) { scope.SetTag("component", "billing-go") })
	for i := 0; i < 3; i++ {
		sentry.CaptureException(chargeCard())
	}
	sentry.CaptureMessage("cache warmed")
	if !sentry.Flush(10 * time.Second) {
		os.Exit(1)
	}
}
