// Command rpengine-demo talks to a character from a terminal, through
// RPEngine (the browser app that runs the model, speech-to-text and
// text-to-speech on the player's machine) or fully offline.
//
//	go run ./cmd/rpengine-demo --engine sim --say "Hello there"
//
// # Modes
//
// By default (--engine real) the demo starts the library's loopback server
// on port 38471, prints the address to open in a browser
// (https://rpengine.gemtavern.com/#port=N) and waits for the engine.
// With --engine sim it dials rpengine/enginetest's fake engine to the same
// server over real loopback, on a free port: everything but the model is
// real, and the screen says the replies are simulated.
//
// --mailbox DIR uses the file transport (docs/rpengine-protocol.md)
// instead of a socket, for games that cannot open one: the demo serves the
// folder DIR, which the player selects in the RPEngine page; with --engine
// sim the fake engine runs in file mode against that folder. Everything
// else is the same. A folder another process serves is refused (exit 2).
//
// # Scripted contract
//
// With --say TEXT and/or --wav FILE the demo sends one event and exits when
// the reply ends. stdout carries only the reply's final display text and a
// newline; progress and errors go to stderr. --out FILE.wav receives the
// reply's speech exactly as received (44.1 kHz mono PCM16). --wav input of
// any rate and channel count is downmixed and resampled to 16 kHz mono.
// If the connection is lost, superseded or closed before the reply ends, or
// the engine cancels it with connection_lost, the demo waits up to --wait
// for an engine and sends the turn again (--out then keeps only the reply
// that completed). Each wait for an engine is bounded by --wait on its own.
//
// The reply text on stdout is data, and it is escaped the same way in a
// pipe as on a terminal, so that an engine can never drive the terminal of
// whoever reads it: newlines, tabs, backslashes and all printable text are
// written as they are; every other control character (C0 such as ESC and
// BEL, DEL, C1 such as the 8-bit CSI U+009B and OSC U+009D), every
// bidirectional-text control and every byte that is not UTF-8 is written
// as a Go escape (\x1b, \u009b, \u202e, \xff). A script that needs the
// engine's exact bytes should use --record. The text is not cut (the
// library bounds a reply's text at 4 MiB). Everything on stderr is escaped
// the same way, and each value from the engine shown there is cut: the
// client version, capture state and error code at 256 bytes, an error
// message or a transcript at 2 KiB.
//
// Exit codes: 0 the reply completed; 1 the engine answered with an error or
// cancelled the reply for another reason; 2 usage error (bad flag, card,
// WAV or prompt file, port or mailbox folder in use); 3 no engine
// connected, or none came back, within --wait; 130 interrupted by Ctrl-C,
// 143 terminated by SIGTERM (either way the reply in flight is cancelled
// first; SIGTERM quits at once, with no second Ctrl-C to wait for).
//
// # Interactive
//
// Without --say and --wav each line read from stdin is one event, whether
// stdin is a terminal or a pipe. On a terminal (stdin and stdout both,
// outside Windows, whose console edits lines itself) the line is edited:
// Left/Right, Home/End, Up/Down for the last 100 lines, Ctrl-A/E/B/F,
// Ctrl-W/U/K, Alt-Left/Right, Delete, UTF-8 and bracketed paste, in
// display columns and grapheme clusters as github.com/rivo/uniseg counts
// them (CJK and emoji are two columns wide, combining marks none). The
// prompt and the line share one row: the status is clipped and a long
// line scrolls sideways. Output is printed above the line being typed.
// Control characters and key escape sequences are never sent: they are
// removed from the line, typed or piped, and the demo says so. Lines are
// queued, never dropped, and sent in order. Reply text streams to stdout
// (on a terminal with the line editor, a line at a time, so that typing
// never lands inside a reply's line); speech plays as each sentence
// completes. On a terminal a status line (connection, queued lines,
// speaking, voice, language) precedes the prompt.
//
// Ctrl-C works as in a shell: it clears the line being typed; at an empty
// line it cancels the reply in flight (or the wait to send it), and at
// the prompt it quits when pressed twice in a row. SIGINT from elsewhere
// (kill -INT, or a pipe's Ctrl-C) cancels a reply and, at the prompt,
// quits. Ctrl-D at an empty prompt, or the end of stdin, quits once
// queued turns are answered.
//
// When the engine goes away before a reply ends, the turn is sent again
// on the next engine if nothing of the reply was shown yet; once some of
// its text was shown, what arrived is kept, the demo says it may be cut
// short, and the turn is not sent again (the player would read it twice;
// Issue #31). A scripted turn, which shows nothing before the reply
// completes, is always sent again.
//
// Waits for the engine have no limit unless --wait is given. Slash
// commands: /mic, /browser-mic, /card FILE, /voice, /lang,
// /text-only, /help, /quit. Without a sound device, playback and /mic say
// so once and the demo goes on (--out still works).
//
// # Cards
//
// The default card (Wren, a lighthouse keeper) is embedded in the binary.
// --card takes a card as exported, JSON or a PNG with the card in its tEXt
// chunk, and reads it with card.Load: V1, Pygmalion and V3 cards and
// exports missing fields (a lorebook's extensions, say) are repaired on
// load, each repair listed, and the repaired card is what is sent. Its
// greeting is shown as it loads, macros replaced by card.Substitute
// ({{user}} is --player, or the engine's "Player"). A card
// that still breaks a Character Card V2 rule (a blank name, a value of the
// wrong type) is refused with every violation and what to edit; a card
// whose numbers may hash differently in the engine is sent as a snapshot
// without targetHash, and the demo says why. A character id is derived
// from the name (--character-id sets it): letters outside ASCII add a
// short hash of the name, so names in other scripts get ids of their own.
// /card FILE shows how the card travelled (snapshot, patch or reference),
// as read from the messages actually sent.
//
// -v, or the environment variable RPENGINE_DEMO_DEBUG set to anything,
// turns on debug logs (the server's and the simulated engine's).
// --inspect ADDR serves the inspector page (docs/inspector.md) on that
// loopback address (127.0.0.1:0 picks a free port; any other host exits
// 2) and prints its URL, token included, at start.
//
// The hidden flag --sim-faults (for tests) makes the simulated engine
// misbehave: error=CODE, delay=DURATION, disconnect-after=N, cancel=REASON,
// cancel-lost, gone, full.
package main
