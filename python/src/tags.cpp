// Tags from Python and back (devices/tags.h), and sluice.Chunk: a source's
// item with its tags. The dict's shape is sluice.wire's Message.tags, so a
// tag reads the same from a pipeline's sink and from the wire.

#include <nanobind/stl/string.h>

#include <string>

#include <sluice/base/error.h>

#include "bindings.h"

namespace sluice::python {

namespace {

TagValue value_of(nb::handle v, const std::string& where) {
  // bool is an int to Python; a tag of it would read back as 0 or 1.
  if (nb::isinstance<nb::bool_>(v))
    throw TypeError(error_message(where, "value", "int, float, str or an array", "bool"));
  if (nb::isinstance<nb::int_>(v)) return nb::cast<int64_t>(v);
  if (nb::isinstance<nb::float_>(v)) return nb::cast<double>(v);
  if (nb::isinstance<nb::str>(v)) return nb::cast<std::string>(v);
  return tensor_of(v, where.c_str());
}

}  // namespace

Tags tags_of(nb::handle dict, const char* where) {
  Tags tags;
  if (dict.is_none()) return tags;
  if (!nb::isinstance<nb::dict>(dict))
    throw TypeError(
        error_message(where, "tags", "a dict", nb::cast<std::string>(nb::repr(nb::handle(dict.type())))));
  for (auto [k, v] : nb::borrow<nb::dict>(dict)) {
    std::string key;
    int64_t offset = Tag::kWhole;
    if (nb::isinstance<nb::str>(k)) {
      key = nb::cast<std::string>(k);
    } else if (nb::isinstance<nb::tuple>(k) && nb::len(k) == 2 && nb::isinstance<nb::str>(k[0]) &&
               nb::isinstance<nb::int_>(k[1])) {
      key = nb::cast<std::string>(k[0]);
      offset = nb::cast<int64_t>(k[1]);
    } else {
      throw TypeError(error_message(where, "a tag's key", "a str, or a (str, int offset) tuple",
                                    nb::cast<std::string>(nb::repr(k))));
    }
    tags.set(key, value_of(v, std::string(where) + ", tag '" + key + "'"), offset);
  }
  return tags;
}

nb::dict tags_to_python(const Tags& tags) {
  nb::dict out;
  for (const Tag& t : tags.all()) {
    nb::object value = std::visit(
        [](const auto& v) -> nb::object {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, Tensor>)
            return tensors_to_python({v}, false);
          else
            return nb::cast(v);
        },
        t.value);
    out[nb::make_tuple(t.key, t.offset)] = value;
  }
  return out;
}

Chunk chunk_of(nb::handle item, const char* where) {
  if (nb::isinstance<Chunk>(item)) return nb::cast<const Chunk&>(item);
  return {tensors_of(item, where), {}};
}

void bind_tags(nb::module_& m) {
  nb::class_<Chunk>(m, "Chunk",
                    "A source's item with its tags: Chunk(arrays, tags), arrays an array or a tuple of "
                    "them, tags a dict {key: value} for the whole chunk or {(key, row): value} at a row; "
                    "values int, float, str or a small array. time_ns and sample_rate say when each row "
                    "was sampled (zip_by_time, event_window).")
      .def(
          "__init__",
          [](Chunk* self, nb::handle arrays, nb::handle tags) {
            new (self) Chunk{tensors_of(arrays, "Chunk"), tags_of(tags, "Chunk")};
          },
          nb::arg("arrays"), nb::arg("tags") = nb::none())
      .def_prop_ro("arrays", [](const Chunk& c) { return tensors_to_python(c.tensors, true); })
      .def_prop_ro("tags", [](const Chunk& c) { return tags_to_python(c.tags); });
}

}  // namespace sluice::python
