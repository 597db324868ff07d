#pragma once
// The chat's console: Ctrl-C (SIGINT) as a request to stop the reply, and
// lines read from stdin so that a Ctrl-C at the prompt is seen as such.

#include <string>

namespace cli {

// Installs the SIGINT handler: the first signal sets the stop flag; a second
// one before the flag is cleared (a reply that does not stop) exits at once.
// Without it (as in `run`) SIGINT keeps its default action.
void install_interrupt_handler();
bool interrupt_requested();
void clear_interrupt();

enum class ReadResult { LINE, END, INTERRUPTED };

// Reads one line from stdin (without its newline): END at the end of input
// (Ctrl-D on a terminal), INTERRUPTED when a SIGINT arrives while waiting.
ReadResult read_line(std::string & line);

} // namespace cli
