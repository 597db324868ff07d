#pragma once
// The subcommands; each parses argv[2..] and returns the process exit code.

namespace cli {

int cmd_run(int argc, char ** argv);
int cmd_chat(int argc, char ** argv);
int cmd_bench(int argc, char ** argv);
int cmd_perplexity(int argc, char ** argv);
int cmd_info(int argc, char ** argv);
int cmd_devices(int argc, char ** argv);
int cmd_rpc_server(int argc, char ** argv);
int cmd_quantize(int argc, char ** argv);
int cmd_tokenize(int argc, char ** argv);

} // namespace cli
