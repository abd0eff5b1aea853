package inspect_test

import (
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"

	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/inspect"
)

// A game mounts the inspector on a loopback debug listener of its own and
// prints the page's URL, token included, for its developer.
func Example() {
	in := inspect.New(nil)
	server, err := rpengine.NewServer(&rpengine.ServerOptions{Recorder: in, Logger: in.Logger(slog.New(slog.DiscardHandler)), OnSession: in.OnSession})
	if err != nil {
		log.Fatal(err)
	}
	defer server.Close()
	debug, err := net.Listen("tcp", "127.0.0.1:0") // loopback only: the page shows the player's words
	if err != nil {
		log.Fatal(err)
	}
	hs := &http.Server{Handler: in}
	go hs.Serve(debug)
	defer hs.Close()
	defer in.Close() // ends open pages' event streams

	page := in.URL(debug.Addr().String()) // what the game prints
	res, err := http.Get(page)
	if err != nil {
		log.Fatal(err)
	}
	res.Body.Close()
	fmt.Println("with the token:", res.Status)
	res, err = http.Get("http://" + debug.Addr().String() + "/")
	if err != nil {
		log.Fatal(err)
	}
	res.Body.Close()
	fmt.Println("without:", res.Status)
	// Output:
	// with the token: 200 OK
	// without: 403 Forbidden
}
