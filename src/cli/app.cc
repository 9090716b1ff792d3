// The top-level command line: global options, logging set-up, dispatch and exit-code mapping.
#include "forgek/cli/app.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <filesystem>
#include <memory>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "commands.h"
#include "help_examples.h"
#include "option_checks.h"

namespace forgek::cli {
namespace {

// Diagnostics go to stderr from the start: an error before the options are parsed (or while the
// log file is opened) must not reach stdout, spdlog's default.
void LogToStderr() {
  auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  sink->set_pattern("forgek: %^%l%$: %v");
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("forgek", sink));
}

// The log file may be a regular file or a character device (/dev/null, /dev/full, a terminal). It
// is opened here without blocking, and its kind read from the open descriptor, before spdlog opens
// it: opening a FIFO for writing waits for a reader for ever (ENXIO here when none reads), and a
// FIFO with a reader, a socket or a block device is no place for a log.
void CheckLogFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw UsageError("--log-file " + path + " is a folder; name a file to write the log to");
  int fd;
  do {
    fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0644);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    if (errno == ENXIO)  // a FIFO no one reads, or a socket
      throw UsageError("--log-file " + path +
                       " is a FIFO or a socket, not a regular file; name a file to write the log to");
    return;  // spdlog's own open says why (permission, a missing folder)
  }
  struct stat st {};
  const bool known = ::fstat(fd, &st) == 0;
  ::close(fd);
  if (!known || S_ISREG(st.st_mode) || S_ISCHR(st.st_mode)) return;
  const char* what = S_ISFIFO(st.st_mode)   ? "a FIFO"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                     : S_ISBLK(st.st_mode)  ? "a block device"
                                            : "something other than a file";
  throw UsageError("--log-file " + path + " is " + what + ", not a regular file; name a file to write the log to");
}

void SetUpLogging(const Context& ctx) {
  if (!ctx.log_file.empty()) CheckLogFile(ctx.log_file);
  std::vector<spdlog::sink_ptr> sinks;
  auto err_sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  err_sink->set_pattern("forgek: %^%l%$: %v");
  spdlog::level::level_enum level = spdlog::level::info;
  if (ctx.quiet) level = spdlog::level::warn;
  if (ctx.verbose == 1) level = spdlog::level::debug;
  if (ctx.verbose >= 2) level = spdlog::level::trace;
  err_sink->set_level(level);
  sinks.push_back(err_sink);
  if (!ctx.log_file.empty()) {
    std::shared_ptr<spdlog::sinks::basic_file_sink_mt> file_sink;
    try {
      file_sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(ctx.log_file);
    } catch (const spdlog::spdlog_ex& e) {
      throw UsageError("--log-file " + ctx.log_file + ": cannot open it for writing (" + e.what() + ")");
    }
    file_sink->set_pattern("%Y-%m-%dT%H:%M:%S.%e %l [%P] %v");
    file_sink->set_level(spdlog::level::trace);
    sinks.push_back(file_sink);
  }
  auto logger = std::make_shared<spdlog::logger>("forgek", sinks.begin(), sinks.end());
  // A log file that stops taking writes (a full disk, /dev/full) is said once, in forgek's words;
  // the run goes on with its diagnostics on stderr.
  logger->set_error_handler([path = ctx.log_file](const std::string& msg) {
    static bool said = false;
    if (said) return;
    said = true;
    std::fprintf(stderr, "forgek: warning: cannot write the log file %s (%s); diagnostics go on to stderr only\n",
                 path.c_str(), msg.c_str());
  });
  logger->set_level(spdlog::level::trace);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

// `forgek bogus`: CLI11 only says a subcommand is required; name the word that is not a command.
// Returns "" when every word on the line is an option, an option's value or a command.
std::string UnknownCommandWord(const CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string word = argv[i];
    if (word == "--") return "";
    if (!word.empty() && word[0] == '-') {
      if (word.find('=') != std::string::npos) continue;
      const CLI::Option* opt = app.get_option_no_throw(word);
      if (opt && opt->get_items_expected_min() > 0) ++i;  // the option's value (flags take none)
      continue;
    }
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
      if (sub->check_name(word)) return "";
    return word;
  }
  return "";
}

// Data goes to stdout; a write that failed there (a full disk, a closed pipe's reader, /dev/full)
// must not end in exit 0 with the output cut short.
bool StdoutWritten(std::string* err) {
  std::cout.flush();
  errno = 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout) || std::cout.fail()) {
    *err = errno != 0 ? std::strerror(errno) : "a write failed (a full disk, or the reader went away): the output is incomplete";
    return false;
  }
  return true;
}

}  // namespace

int RunCommandLine(int argc, char** argv) {
  // Past a file-size limit (ulimit -f) a write fails with EFBIG, which every writer handles (the
  // old file kept, the temporary removed), instead of the signal killing the process mid-write.
  std::signal(SIGXFSZ, SIG_IGN);
  LogToStderr();
  Context ctx;
  CLI::App app{"forgek: evolves faster GPU kernels and remembers what it learned", "forgek"};
  app.require_subcommand(1);
  app.fallthrough();
  app.set_version_flag("--version", FORGEK_VERSION);
  app.add_option("--store", ctx.store, "Knowledge-store file (default $XDG_DATA_HOME/forgek/store.db)")
      ->envname("FORGEK_STORE")
      ->check(NonEmpty());
  app.add_option("--arch", ctx.arch, "Target architecture: sm90 (Hopper) or sm100 (Blackwell)")
      ->envname("FORGEK_ARCH")
      ->check(CLI::IsMember({"sm90", "sm100"}));
  app.add_flag("-v,--verbose", ctx.verbose, "More diagnostics on stderr (repeat for more)")
      ->envname("FORGEK_VERBOSE");
  CLI::Option* verbose = app.get_option("--verbose");
  app.add_flag("-q,--quiet", ctx.quiet, "Only warnings and errors on stderr")
      ->envname("FORGEK_QUIET")
      ->excludes(verbose);
  app.add_flag("--json", ctx.json, "Machine-readable JSON on stdout")->envname("FORGEK_JSON");
  app.add_option("--log-file", ctx.log_file, "Also write a full log (every level) to this file")
      ->envname("FORGEK_LOG_FILE")
      ->check(NonEmpty());
  app.add_option("--operators", ctx.operators_dir, "Folder of operator definitions (default: shipped operators/)")
      ->envname("FORGEK_OPERATORS")
      ->check(NonEmpty());
  for (CommandSetup setup : kCommands) setup(app, ctx);
  AddHelpExamples(app);
  app.parse_complete_callback([&ctx] { SetUpLogging(ctx); });

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::string word = UnknownCommandWord(app, argc, argv);
    if (!word.empty()) {
      std::string commands;
      const CLI::App& top = app;
      for (const CLI::App* sub : top.get_subcommands([](const CLI::App*) { return true; }))
        commands += (commands.empty() ? "" : ", ") + sub->get_name();
      std::fprintf(stderr, "forgek: unknown command '%s'; the commands: %s\nRun 'forgek --help' for usage.\n",
                   word.c_str(), commands.c_str());
      return kExitUsage;
    }
    std::fprintf(stderr, "forgek: %s\nRun 'forgek --help' for usage.\n", e.what());
    return kExitUsage;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "forgek: %s\n", e.what());
    return kExitUsage;
  } catch (const Failure& e) {
    spdlog::error("{}", e.what());
    return kExitFailure;
  } catch (const std::exception& e) {
    spdlog::error("internal error: {}", e.what());
    return kExitFailure;
  }
  std::string err;
  if (!StdoutWritten(&err)) {
    spdlog::error("writing standard output: {}", err);
    return kExitFailure;
  }
  return ctx.exit_code;
}

}  // namespace forgek::cli
