// Package ws is the WebSocket transport of the game's server (package
// rpengine): the acceptance checks of an upgrade request (accept.go),
// the listener that bounds connections and their handshake deadline
// (listener.go), each engine connection's writes (conn.go), and the
// server that upgrades, reads the hello, attaches a session through the
// transport.Host and reads the session's messages in order (serve.go).
package ws
