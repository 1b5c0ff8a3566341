package oob

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"
)

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// One client is accepted and the port is free again afterwards, as the C
// servers stop listening once their client came.
func TestAcceptOneStopsListening(t *testing.T) {
	addr := freePort(t)
	accepted := make(chan error, 1)
	go func() {
		c, err := AcceptOne(context.Background(), "tcp4", addr, 5*time.Second)
		if err == nil {
			c.Close()
		}
		accepted <- err
	}()
	var c net.Conn
	var err error
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if c, err = Dial(context.Background(), "tcp4", addr, time.Second); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	c.Close()
	if err := <-accepted; err != nil {
		t.Fatalf("accept: %v", err)
	}
	if c, err := net.DialTimeout("tcp4", addr, time.Second); err == nil {
		c.Close()
		t.Error("the port still listens after its one client")
	}
}

func TestAcceptOneWaitsAtMostWait(t *testing.T) {
	begin := time.Now()
	_, err := AcceptOne(context.Background(), "tcp4", freePort(t), 50*time.Millisecond)
	if !IsTimeout(err) {
		t.Fatalf("err %v, want a timeout", err)
	}
	if took := time.Since(begin); took > 5*time.Second {
		t.Errorf("took %v", took)
	}
}

// A context that ends stops the wait with its own error, however long the
// wait's bound.
func TestAcceptOneEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	_, err := AcceptOne(ctx, "tcp4", freePort(t), 0)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}

func TestAcceptOneReportsAPortInUse(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := AcceptOne(context.Background(), "tcp4", l.Addr().String(), time.Second); err == nil || IsTimeout(err) {
		t.Fatalf("err %v, want the listen error", err)
	}
}

func TestDialRefused(t *testing.T) {
	_, err := Dial(context.Background(), "tcp4", freePort(t), time.Second)
	if err == nil || IsTimeout(err) {
		t.Fatalf("err %v, want a refusal", err)
	}
}
