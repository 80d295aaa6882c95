#include "journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace cachewise::tuner {
namespace {

constexpr const char* kFormatKey = "cachewise_tuner_journal";
constexpr int kFormatVersion = 1;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string() + ": cannot read the journal");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

} // namespace

nlohmann::json round_to_json(const RoundRecord& record) {
  nlohmann::json json = {{"config", record.config.to_string()}, {"round", record.round}, {"ok", record.ok}};
  if (record.ok) {
    json["samples_ms"] = record.samples_ms;
    json["converged"] = record.converged;
  } else {
    json["failure"] = record.failure;
  }
  if (!record.device.name.empty()) json["device"] = device_to_json(record.device);
  return json;
}

RoundRecord round_from_json(const nlohmann::json& json) {
  RoundRecord record;
  try {
    record.config = Config::parse(json.at("config").get<std::string>());
    record.round = json.at("round").get<int>();
    record.ok = json.at("ok").get<bool>();
    if (record.ok) {
      record.samples_ms = json.at("samples_ms").get<std::vector<double>>();
      record.converged = json.at("converged").get<bool>();
      if (record.samples_ms.empty()) throw InputError("samples_ms: empty");
    } else {
      record.failure = json.at("failure").get<std::string>();
    }
    if (json.contains("device")) record.device = device_from_json(json.at("device"));
  } catch (const nlohmann::json::exception& e) {
    throw InputError(std::string("journal record: ") + e.what());
  }
  return record;
}

Journal::Journal(std::filesystem::path path, const nlohmann::json& identity) : path_(std::move(path)) {
  const nlohmann::json header = {{kFormatKey, kFormatVersion}, {"run", identity}};
  bool has_header = false;
  if (std::filesystem::exists(path_)) {
    const std::string text = read_file(path_);
    const std::size_t complete = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
    // A killed run may leave half a line: drop it, and cut it off so appends start clean.
    if (complete < text.size()) std::filesystem::resize_file(path_, complete);
    std::istringstream lines(text.substr(0, complete));
    std::string line;
    int line_number = 0;
    while (std::getline(lines, line)) {
      ++line_number;
      const std::string where = path_.string() + ":" + std::to_string(line_number) + ": ";
      nlohmann::json json;
      try {
        json = nlohmann::json::parse(line);
      } catch (const nlohmann::json::parse_error&) {
        throw InputError(where + "malformed journal line");
      }
      if (line_number == 1) {
        if (!json.contains(kFormatKey)) throw InputError(where + "not a cachewise tuner journal");
        if (json.value("run", nlohmann::json()) != identity) {
          throw InputError(where + "journal belongs to another run (" + json.value("run", nlohmann::json()).dump() +
                           "), not " + identity.dump());
        }
        has_header = true;
        continue;
      }
      try {
        RoundRecord record = round_from_json(json);
        records_[{record.config.to_string(), record.round}] = std::move(record);
      } catch (const InputError& e) {
        throw InputError(where + e.what());
      }
    }
  }
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw InputError(path_.string() + ": cannot open the journal: " + std::strerror(errno));
  if (!has_header) write_line(header);
}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

const RoundRecord* Journal::find(const Config& config, int round) const {
  const auto found = records_.find({config.to_string(), round});
  return found == records_.end() ? nullptr : &found->second;
}

void Journal::append(const RoundRecord& record) {
  write_line(round_to_json(record));
  records_[{record.config.to_string(), record.round}] = record;
}

void Journal::write_line(const nlohmann::json& json) {
  const std::string line = json.dump() + '\n';
  std::size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(path_.string() + ": journal write failed: " + std::strerror(errno));
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd_) != 0) throw std::runtime_error(path_.string() + ": journal fsync failed: " + std::strerror(errno));
}

} // namespace cachewise::tuner
