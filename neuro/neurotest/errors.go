package neurotest

import "errors"

// ErrDown is returned by [Server.Dial] while the server is set down
// ([Server.SetDown]).
var ErrDown = errors.New("neurotest: server down")
