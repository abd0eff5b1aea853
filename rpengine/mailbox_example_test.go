package rpengine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

// A game that cannot open a socket serves a mailbox folder instead: one
// option, and every other line stays the same.
func ExampleMailboxOptions() {
	dir, _ := os.MkdirTemp("", "rpengine-mailbox")
	defer os.RemoveAll(dir)
	mailboxDir := filepath.Join(dir, "rpengine")

	server, _ := rpengine.NewServer(&rpengine.ServerOptions{
		Mailbox: &rpengine.MailboxOptions{Dir: mailboxDir, IntegrationID: "my-game"},
	})
	// Start sets the folder up (2048 slot files, which takes seconds on a
	// loaded machine) and serves it.
	if err := server.Start(); err != nil {
		fmt.Println(err) // rpengine.ErrMailboxLocked: another game serves it
		return
	}
	defer server.Close()

	// Here the player would select mailboxDir in the RPEngine page; the
	// fake engine stands in for it.
	// The game writes 2048 slot files first, which takes seconds on a
	// loaded machine.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	eng, err := enginetest.DialMailbox(ctx, mailboxDir, nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer eng.Close()

	c, _ := card.Parse([]byte(cardJSON))
	reply, err := server.Reply(ctx, rpengine.ReplyRequest{IntegrationID: "my-game", CharacterID: "ari", Card: c, Text: "Hello!"})
	if err != nil {
		fmt.Println(err)
		return
	}
	result, err := reply.Wait(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(result.Text)
	// Output: I hear you. You said: Hello!
}
