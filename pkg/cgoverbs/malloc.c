// The only malloc calls in the process are libibverbs' and librdmacm's,
// made while a connection is set up and torn down, from whichever thread
// the Go scheduler ran that goroutine on. glibc gives each new thread that
// allocates an arena of its own (up to 8 per CPU) and keeps what was freed
// in it resident, so a long-running responder grew by about 550 KB each
// time a client landed on a thread it had not used before. One arena
// lets every connection reuse what the last one freed; the allocations are
// few and off the data path, so sharing its lock costs nothing measurable.
#include <malloc.h>

// Before main and before the Go runtime starts a thread: a thread that has
// malloc'd once keeps its arena, so a later limit would not reach it.
__attribute__((constructor)) static void cv_one_malloc_arena(void)
{
	mallopt(M_ARENA_MAX, 1);
}
