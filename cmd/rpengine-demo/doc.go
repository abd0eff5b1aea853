// Command rpengine-demo talks to a character from a terminal, through
// RPEngine (the browser app that runs the model, speech-to-text and
// text-to-speech on the player's machine) or fully offline.
//
//	go run ./cmd/rpengine-demo --engine sim --say "Hello there"   # offline, one turn
//	go run ./cmd/rpengine-demo                                    # open the printed URL in a browser, then type
//	go run ./cmd/rpengine-demo --engine sim --card my-card.png    # chat offline with a downloaded card
//	go run ./cmd/rpengine-demo --say "Hi" --out reply.wav --wait 5m
//
// By default (--engine real) the demo serves the library's loopback server
// on port 38471, prints the address to open in a browser and waits for the
// engine. --engine sim connects the fake engine of rpengine/enginetest
// instead, over real loopback: everything but the model is real, and the
// screen says the replies are simulated. --mailbox DIR uses the file
// transport instead of a socket, in either mode.
//
// With --say TEXT and/or --wav FILE the demo sends one event and exits
// when the reply ends: stdout carries only the reply's final text, escaped
// so that an engine cannot drive the terminal; progress and errors go to
// stderr. Without them each line read from stdin is one event; on a
// terminal the line is edited as in a shell, a status line precedes the
// prompt, reply text streams and speech plays as each sentence completes.
// Slash commands: /mic, /browser-mic, /card FILE, /voice, /lang,
// /text-only, /help, /quit. Ctrl-C clears the line, cancels a reply, and
// at an empty prompt quits when pressed twice; Ctrl-D at an empty prompt
// quits.
//
// Flags, in brief (--help lists them all): --engine real|sim, --port,
// --mailbox DIR, --wait DURATION (how long to wait for an engine), --card
// FILE (JSON or PNG, repaired as card.Load repairs it; default: the
// built-in Wren), --player NAME, --voice F1-F5|M1-M5, --lang CODE,
// --text-only, --no-playback, --say TEXT, --wav FILE.wav, --out FILE.wav
// (the reply's speech as received), --record FILE.jsonl (every message,
// for bug reports), --inspect ADDR (the inspector page, docs/inspector.md),
// -v (debug logs).
//
// Exit status: 0 the reply completed (or the input ended), 1 the engine
// answered with an error or cancelled the reply, 2 usage error (a bad
// flag, card, WAV or prompt file, a port or mailbox folder in use, a
// --record or --out file that cannot be created), 3 no engine connected,
// or none came back, within --wait, 130 interrupted, 143 terminated.
//
// docs/demo.md is the full manual: the scripted contract and its escaping,
// reconnects and resending, the line editor, cards and the test-only
// flags.
package main
