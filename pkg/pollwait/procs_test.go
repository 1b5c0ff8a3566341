package pollwait

import (
	"runtime"
	"testing"
)

func TestReserveSpareP(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	t.Setenv("GOMAXPROCS", "")
	runtime.GOMAXPROCS(1)
	ReserveSpareP()
	if n := runtime.GOMAXPROCS(0); n != 2 {
		t.Fatalf("one P: GOMAXPROCS %d after, want 2", n)
	}
	runtime.GOMAXPROCS(3)
	ReserveSpareP()
	if n := runtime.GOMAXPROCS(0); n != 3 {
		t.Fatalf("GOMAXPROCS 3 lowered to %d", n)
	}
	t.Setenv("GOMAXPROCS", "1") // the user's choice wins
	runtime.GOMAXPROCS(1)
	ReserveSpareP()
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Fatalf("GOMAXPROCS=1 in the environment, yet %d", n)
	}
}
