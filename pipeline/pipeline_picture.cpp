// Pipeline::to_dot and to_mermaid: the graph as a picture. Nodes are drawn
// with their kind and name, edges with the specs they carry, and the nodes
// of each process of a partitioned pipeline inside a box of their own. The
// specs are what start() resolves, so stages are traced (not run) first.

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <sluice/pipeline/detail/pipeline_impl.h>
#include <sluice/pipeline/pipeline.h>

namespace sluice {
namespace {

std::string specs_text(const std::vector<Spec>& specs) {
  std::string out;
  for (const Spec& s : specs) out += (out.empty() ? "" : ", ") + s.str();
  return out;
}

// Text inside DOT's double quotes: a name may hold any character.
std::string dot_escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// Mermaid's labels take no quotes inside: they become #quot;.
std::string mermaid_label(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '"' ? std::string("#quot;") : std::string(1, c);
  return "\"" + out + "\"";
}

std::string draw_dot(const std::vector<DrawnNode>& drawn, const std::vector<std::string>& processes);
std::string draw_mermaid(const std::vector<DrawnNode>& drawn, const std::vector<std::string>& processes);

}  // namespace

std::vector<DrawnNode> Pipeline::Impl::drawing() const {
  std::vector<DrawnNode> drawn;
  for (const Slot& s : slots) {
    DrawnNode d{s.node->name(), s.node->kind(), s.process, s.outputs, ""};
    if (s.node->has_output())
      if (const std::optional<std::vector<Spec>> out = s.node->output_spec()) d.carries = specs_text(*out);
    drawn.push_back(std::move(d));
  }
  return drawn;
}

// Before the run, the specs as start() resolves them, without partitioning
// (the picture is of the whole program, every process's nodes); after it,
// the graph as it runs in this process.
std::string Pipeline::Impl::picture(bool mermaid) {
  if (!validated) resolve_specs();
  const std::vector<DrawnNode> drawn = drawing();
  std::vector<std::string> processes;  // in order of first appearance; "" for nodes of no process
  for (const DrawnNode& d : drawn)
    if (std::find(processes.begin(), processes.end(), d.process) == processes.end())
      processes.push_back(d.process);
  return mermaid ? draw_mermaid(drawn, processes) : draw_dot(drawn, processes);
}

std::string Pipeline::to_dot() { return impl_->picture(false); }
std::string Pipeline::to_mermaid() { return impl_->picture(true); }

namespace {

std::string draw_dot(const std::vector<DrawnNode>& drawn, const std::vector<std::string>& processes) {
  std::string out = "digraph pipeline {\n  rankdir=LR;\n  node [shape=box, style=rounded];\n";
  for (size_t p = 0; p < processes.size(); ++p) {
    const bool boxed = !processes[p].empty();
    const std::string indent = boxed ? "    " : "  ";
    if (boxed)
      out += fmt::format("  subgraph cluster_{} {{\n    label=\"process {}\";\n    style=dashed;\n", p,
                         dot_escaped(processes[p]));
    for (size_t i = 0; i < drawn.size(); ++i)
      if (drawn[i].process == processes[p])
        // \\n: Graphviz's line break, the kind above the name.
        out += fmt::format("{}n{} [label=\"{}\\n{}\"];\n", indent, i, dot_escaped(drawn[i].kind),
                           dot_escaped(drawn[i].name));
    if (boxed) out += "  }\n";
  }
  for (size_t i = 0; i < drawn.size(); ++i)
    for (int to : drawn[i].outputs)
      out += fmt::format("  n{} -> n{} [label=\"{}\"];\n", i, to, dot_escaped(drawn[i].carries));
  return out + "}\n";
}

std::string draw_mermaid(const std::vector<DrawnNode>& drawn, const std::vector<std::string>& processes) {
  std::string out = "flowchart LR\n";
  for (size_t p = 0; p < processes.size(); ++p) {
    const bool boxed = !processes[p].empty();
    const std::string indent = boxed ? "    " : "  ";
    if (boxed) out += fmt::format("  subgraph p{}[{}]\n", p, mermaid_label("process " + processes[p]));
    for (size_t i = 0; i < drawn.size(); ++i)
      if (drawn[i].process == processes[p])
        out += fmt::format("{}n{}({})\n", indent, i, mermaid_label(drawn[i].kind + " " + drawn[i].name));
    if (boxed) out += "  end\n";
  }
  for (size_t i = 0; i < drawn.size(); ++i)
    for (int to : drawn[i].outputs)
      out += fmt::format("  n{} -->|{}| n{}\n", i, mermaid_label(drawn[i].carries), to);
  return out;
}

}  // namespace
}  // namespace sluice
