package cli

// NothingListensHint is the hint for a connection refused because nothing
// listens on peer ("10.9.0.1 port 7174"): start names the command that
// would listen there.
func NothingListensHint(peer, start string) string {
	return "nothing listens on " + peer + " (start `" + start + "` there, or check -p)"
}
