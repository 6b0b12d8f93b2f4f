#include <sluice/stream/step.h>

#include <sluice/ops/detail/error_format.h>

namespace sluice {

std::string specs_str(const std::vector<Spec>& specs) {
  std::string s;
  for (const Spec& spec : specs) s += (s.empty() ? "" : ", ") + spec.str();
  return "{" + s + "}";
}

std::vector<Spec> specs_of(const Tensors& tensors) {
  std::vector<Spec> specs;
  for (const Tensor& t : tensors) specs.push_back(t.spec());
  return specs;
}

std::vector<Spec> step_parameters(const std::vector<Spec>& input_spec, const Tensors& acc_init, const std::string& who) {
  if (input_spec.empty()) throw StreamError(error_message(who, "input_spec", "at least one Spec", "none"));
  std::vector<Spec> params = input_spec;
  for (size_t i = 0; i < acc_init.size(); ++i) {
    if (!acc_init[i])
      throw StreamError(error_message(who, fmt::format("acc_init[{}]", i), "a tensor", "an empty one"));
    params.push_back(acc_init[i].spec());
  }
  return params;
}

Step::Step(const Function& f, std::vector<Spec> input_spec, const Tensors& acc_init, Device device, std::string who)
    : input_spec_(std::move(input_spec)), acc_count_(acc_init.size()), device_(device), who_(std::move(who)) {
  output_spec_ = outputs_of(f, input_spec_, acc_init, who_);
  exe_ = compile(f, device_);
}

std::vector<Spec> Step::outputs_of(const Function& f, const std::vector<Spec>& input_spec, const Tensors& acc_init,
                                   const std::string& who) {
  std::vector<Spec> params = step_parameters(input_spec, acc_init, who);
  if (f.inputs() != params)
    throw StreamError(error_message(who, "", "a function of the chunk and accumulator " + specs_str(params),
                                    "one of " + specs_str(f.inputs())));
  std::vector<Spec> results = f.output_specs();
  const size_t acc_count = acc_init.size();
  if (results.size() < acc_count)
    throw StreamError(error_message(
        who, "", fmt::format("the function to return its outputs and then {} accumulator tensors", acc_count),
        fmt::format("{} results", results.size())));
  for (size_t i = 0; i < acc_count; ++i) {
    const Spec& returned = results[results.size() - acc_count + i];
    if (returned != acc_init[i].spec())
      throw StreamError(error_message(
          who, fmt::format("accumulator {}", i),
          fmt::format("the function to return {} as the new accumulator", acc_init[i].spec()), returned));
  }
  results.resize(results.size() - acc_count);
  return results;
}

Tensors Step::place(const Tensors& chunk) const {
  if (chunk.size() != input_spec_.size())
    throw ShapeError(error_message(
        who_, "", fmt::format("a chunk of {} tensors {}", input_spec_.size(), specs_str(input_spec_)),
        chunk.size()));
  Tensors placed;
  placed.reserve(chunk.size());
  for (size_t i = 0; i < chunk.size(); ++i) {
    const Tensor& t = chunk[i];
    if (!t || t.spec() != input_spec_[i]) {
      // Every chunk passes here: the message is only built for one that fails.
      const std::string what = fmt::format("chunk tensor {}", i);
      if (!t) throw ShapeError(error_message(who_, what, input_spec_[i], "an empty tensor"));
      if (t.dtype() != input_spec_[i].dtype)
        throw TypeError(error_message(who_, what, input_spec_[i], t.spec()));
      throw ShapeError(error_message(who_, what, input_spec_[i], t.spec()));
    }
    placed.push_back(t.device() == device_ ? t : t.to(device_));
  }
  return placed;
}

Tensors Step::run(const Tensors& placed_chunk, Tensors& acc, OutputMemory output_memory) const {
  if (acc_count_ == 0) return exe_.run(placed_chunk, {.output_memory = output_memory});
  Tensors args;
  args.reserve(placed_chunk.size() + acc_count_);
  args.insert(args.end(), placed_chunk.begin(), placed_chunk.end());
  args.insert(args.end(), acc.begin(), acc.end());
  // The accumulator is donated: a step allocates nothing for state.
  RunOptions options{.output_memory = output_memory};
  for (size_t i = 0; i < acc_count_; ++i) options.donate.push_back(placed_chunk.size() + i);
  Tensors out = exe_.run(args, options);
  acc.assign(out.end() - static_cast<std::ptrdiff_t>(acc_count_), out.end());
  out.resize(out.size() - acc_count_);
  return out;
}

Tensors Step::initial_acc(const Tensors& acc_init) const {
  Tensors acc;
  for (const Tensor& t : acc_init) acc.push_back(t.to(device_));
  return acc;
}

}  // namespace sluice
