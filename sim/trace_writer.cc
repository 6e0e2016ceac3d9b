#include "sim/trace_writer.h"

#include <cstdio>

namespace cs::sim {

std::string json_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 2);
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

std::string format_us(Time t) {
  const int64_t ps = t.ps_count();
  char buf[40];
  std::snprintf(buf, sizeof buf, "%lld.%06lld", static_cast<long long>(ps / 1'000'000),
                static_cast<long long>(ps % 1'000'000));
  return buf;
}

TraceWriter::TraceWriter(std::ostream& out, const OpGraph& graph, FlowNetwork& net,
                         const Routing& routing)
    : out_(out), graph_(graph), net_(net), network_pid_(routing.gpu_count()) {
  op_start_.resize(graph.ops().size());
  out_ << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  for (int g = 0; g < routing.gpu_count(); ++g) {
    begin_event();
    out_ << "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" << g
         << ",\"args\":{\"name\":\"GPU " << g << "\"}}";
    begin_event();
    out_ << "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":" << g
         << ",\"args\":{\"sort_index\":" << g << "}}";
    if (routing.stand_in(g) != g) continue;  // its HBM is its stand-in's, drawn under that GPU
    const uint32_t hbm = routing.hbm(g).v;
    if (hbm >= hbm_gpu_.size()) hbm_gpu_.resize(hbm + 1, -1);
    hbm_gpu_[hbm] = g;
  }
  begin_event();
  out_ << "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" << network_pid_
       << ",\"args\":{\"name\":\"network\"}}";
  const auto& streams = graph.streams();
  for (size_t s = 0; s < streams.size(); ++s) {
    begin_event();
    out_ << "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" << streams[s].gpu
         << ",\"tid\":" << s + 1 << ",\"args\":{\"name\":\"" << json_escape(streams[s].name)
         << "\"}}";
  }
}

void TraceWriter::begin_event() {
  if (!first_) out_ << ",\n";
  first_ = false;
}

void TraceWriter::on_op_start(uint32_t op, Time now) { op_start_[op] = now; }

void TraceWriter::on_op_end(uint32_t op, Time now) {
  const Op& o = graph_.ops()[op];
  const Stream& s = graph_.streams()[o.stream];
  begin_event();
  out_ << "{\"ph\":\"X\",\"name\":\"" << json_escape(graph_.label(o)) << "\",\"pid\":" << s.gpu
       << ",\"tid\":" << o.stream + 1 << ",\"ts\":" << format_us(op_start_[op])
       << ",\"dur\":" << format_us(now - op_start_[op]) << ",\"args\":{\"op\":" << op << "}}";
}

void TraceWriter::on_clock(int gpu, Time now, double MHz) { counter(gpu, "SM clock (MHz)", now, MHz); }

void TraceWriter::counter(int pid, const std::string& name, Time t, double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", value);
  begin_event();
  out_ << "{\"ph\":\"C\",\"name\":\"" << json_escape(name) << "\",\"pid\":" << pid
       << ",\"ts\":" << format_us(t) << ",\"args\":{\"util\":" << buf << "}}";
}

void TraceWriter::link_track(uint32_t l) {
  if (l >= link_tid_.size()) {
    link_tid_.resize(l + 1, -1);
    busy_since_.resize(l + 1);
    busy_.resize(l + 1, 0);
  }
  if (link_tid_[l] >= 0) return;
  link_tid_[l] = next_link_tid_++;
  begin_event();
  out_ << "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" << network_pid_
       << ",\"tid\":" << link_tid_[l] << ",\"args\":{\"name\":\""
       << json_escape(net_.name(LinkId{l})) << "\"}}";
}

void TraceWriter::on_link_load(LinkId link, Time now, Bandwidth load) {
  const std::string& name = net_.name(link);
  if (name.empty()) return;  // per-kernel virtual links are not drawn
  const double cap = net_.capacity(link).bytes_per_s();
  const double util = cap > 0 ? load.bytes_per_s() / cap : 0.0;
  const int hbm_gpu = link.v < hbm_gpu_.size() ? hbm_gpu_[link.v] : -1;
  if (hbm_gpu >= 0) {
    counter(hbm_gpu, "HBM util", now, util);
    return;
  }
  link_track(link.v);
  counter(network_pid_, name + " util", now, util);
  const bool busy = load.bytes_per_s() > 0;
  if (busy && !busy_[link.v]) {
    busy_[link.v] = 1;
    busy_since_[link.v] = now;
  } else if (!busy && busy_[link.v]) {
    busy_[link.v] = 0;
    begin_event();
    out_ << "{\"ph\":\"X\",\"name\":\"busy\",\"pid\":" << network_pid_
         << ",\"tid\":" << link_tid_[link.v] << ",\"ts\":" << format_us(busy_since_[link.v])
         << ",\"dur\":" << format_us(now - busy_since_[link.v]) << "}";
  }
}

void TraceWriter::finish(Time end) {
  for (uint32_t l = 0; l < busy_.size(); ++l)
    if (busy_[l]) on_link_load(LinkId{l}, end, Bandwidth());
  out_ << "\n]}\n";
  out_.flush();
}

}  // namespace cs::sim
