package neuro

import "context"

// Conn is the client's connection, for tests that need a peer no real
// server would be (one that stops reading, a socket that breaks on a
// given write).
type Conn = conn

// SetDial makes c connect with dial, which may wrap the default, given
// as next. It must be called before Connect.
func SetDial(c *Client, dial func(ctx context.Context, url string, next func(context.Context, string) (Conn, error)) (Conn, error)) {
	next := c.dial
	c.dial = func(ctx context.Context, url string) (conn, error) { return dial(ctx, url, next) }
}
