#include "loader/source_layout.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "core/error.h"

namespace shardkit::loader {

namespace {

// The fields a batch returns by default: model inputs and targets (or all with metadata).
std::set<std::string> default_outputs(const Dataset& d, const LoaderOptions& o) {
  std::set<std::string> out;
  for (const Field& f : d.schema().fields())
    if (o.include_metadata || is_model_field(d.info().role_of(f.name).value_or(FieldRole::kOther)))
      out.insert(f.name);
  return out;
}

std::string join(const std::set<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "none" : s;
}

std::string describe(const Field& f) {
  std::string shape;
  for (uint32_t d : f.shape) shape += (shape.empty() ? "" : ",") + std::to_string(d);
  return std::string(dtype_name(f.dtype)) + "[" + shape + "]";
}

}  // namespace

RowLayout::RowLayout(const Dataset& first, const Dataset& other, const LoaderOptions& o) {
  const std::string a = first.path().string(), b = other.path().string();
  const DatasetInfo& ia = first.info();
  const DatasetInfo& ib = other.info();
  auto refuse = [&](const std::string& why) {
    throw Error(ErrorCode::kInvalidArgument, b, "cannot mix '" + a + "' and '" + b + "': " + why);
  };
  auto differ = [&](const std::string& x, const std::string& y, const char* what) {
    if (!x.empty() && !y.empty() && x != y)
      refuse(std::string("the first has ") + what + " '" + x + "', the second '" + y + "'");
  };
  auto name = [](const std::optional<Task>& t) { return t ? std::string(task_name(*t)) : ""; };
  differ(name(ia.task.type), name(ib.task.type), "task");
  differ(ia.tokenizer.fingerprint, ib.tokenizer.fingerprint, "tokenizer fingerprint");
  if (!ia.labels.names.empty() && !ib.labels.names.empty() && ia.labels.names != ib.labels.names)
    refuse("their label names differ, so the same label index means different classes");
  if (o.documents.any() && ia.task.separator_id != ib.task.separator_id)
    refuse("document boundaries need one separator id and theirs differ");

  std::set<std::string> read;
  if (o.fields.empty()) {
    read = default_outputs(first, o);
    const std::set<std::string> theirs = default_outputs(other, o);
    if (read != theirs)
      refuse("a batch would hold {" + join(read) + "} from the first and {" + join(theirs) +
             "} from the second; name common fields with `fields`");
  } else {
    read.insert(o.fields.begin(), o.fields.end());
  }
  for (const std::string* name : {&o.length_field, &o.sequence_field, &o.mlm.input_field})
    if (!name->empty() && first.schema().find(*name)) read.insert(*name);
  if (const std::string* f = ia.field(FieldRole::kFirstSegmentLength)) read.insert(*f);

  const bool same_layout = first.schema() == other.schema();
  same_ = same_layout;
  for (const std::string& name : read) {
    const Field* fa = first.schema().find(name);
    if (!fa) continue;  // the Collator names a field the first source lacks
    const Field* fb = other.schema().find(name);
    if (!fb) refuse("the second has no field '" + name + "' (" + other.schema().canonical() + ")");
    if (fa->dtype != fb->dtype || fa->shape != fb->shape)
      refuse("field '" + name + "' is " + describe(*fa) + " in the first and " + describe(*fb) +
             " in the second");
    if (ia.role_of(name) != ib.role_of(name))
      refuse("field '" + name + "' has role '" +
             std::string(field_role_name(ia.role_of(name).value_or(FieldRole::kOther))) +
             "' in the first and '" +
             std::string(field_role_name(ib.role_of(name).value_or(FieldRole::kOther))) +
             "' in the second");
    if (!same_layout) copies_.push_back({fb->offset, fa->offset, fa->byte_size()});
  }
}

void RowLayout::repack(const unsigned char* row, unsigned char* out) const {
  for (const Copy& c : copies_) std::memcpy(out + c.to, row + c.from, c.bytes);
}

}  // namespace shardkit::loader
