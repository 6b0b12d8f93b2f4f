// The wire format without sockets: encode then decode every dtype and rank,
// the header's bytes, the CRC, and every class of malformed message.

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include <sluice/io/npy.h>
#include <sluice/io/wire.h>
#include "tests/io/wire_test_util.h"

namespace sluice {
namespace {

using test::frames_of;
using test::received;

TEST(Wire, RoundTripsEveryDtypeAndRankIncludingEmptyTensors) {
  uint32_t seed = 0;
  for (const Spec& spec : test::round_trip_specs()) {
    Tensor t = test::random_tensor(spec, ++seed);
    for (bool crc : {false, true}) {
      wire::Message back = wire::decode(received(frames_of(test::data_message({t}, seed, 9), {.crc = crc})));
      ASSERT_EQ(back.tensors.size(), 1u) << spec.str();
      EXPECT_TRUE(test::identical(back.tensors[0], t)) << spec.str() << (crc ? " with crc" : "") << ": bytes differ";
      EXPECT_EQ(back.header.seq, seed) << spec.str();
      EXPECT_EQ(back.header.stream_id, 9u) << spec.str();
      EXPECT_EQ(back.header.flags, crc ? wire::kFlagCrc : 0) << spec.str();
    }
  }
}

TEST(Wire, CarriesSeveralTensorsInOneMessage) {
  std::vector<Tensor> ts = {test::random_tensor(f64({3}), 1), test::random_tensor(u8({0}), 2),
                            test::random_tensor(c64({2, 2}), 3)};
  wire::Message back = wire::decode(received(frames_of(test::data_message(ts, 1))));
  ASSERT_EQ(back.tensors.size(), 3u);
  for (size_t i = 0; i < ts.size(); ++i) EXPECT_TRUE(test::identical(back.tensors[i], ts[i])) << "tensor " << i;
}

TEST(Wire, HeaderFrameIsTheDocumentedLittleEndianLayout) {
  wire::Message m = test::data_message({test::random_tensor(s32({2}), 1)}, 0x0102030405060708, 0x1112131415161718);
  std::vector<std::string> f = frames_of(m);
  ASSERT_EQ(f.size(), 3u) << "header, npy header, data";
  const std::string want_header("SLCE\x01\x00\x00\x00"
                                "\x18\x17\x16\x15\x14\x13\x12\x11"
                                "\x08\x07\x06\x05\x04\x03\x02\x01"
                                "\x01\x00\x00\x00"
                                "\x00\x00\x00\x00",
                                32);
  EXPECT_EQ(f[0], want_header) << "magic, version 1, kind data, flags 0, stream id, seq, count 1, crc 0";
}

TEST(Wire, NpyHeaderFramesAreWhatNumpyWrites) {
  // numpy 1.24: np.lib.format.write_array_header_1_0 for each spec.
  const std::pair<Spec, std::string> cases[] = {
      {f32({2, 3}), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"},
      {pred({}), "{'descr': '|b1', 'fortran_order': False, 'shape': (), }"},
      {c128({5}), "{'descr': '<c16', 'fortran_order': False, 'shape': (5,), }"},
      {u16({0, 4, 1, 2}), "{'descr': '<u2', 'fortran_order': False, 'shape': (0, 4, 1, 2), }"},
  };
  for (const auto& [spec, dict] : cases) {
    std::string want = std::string("\x93NUMPY\x01\x00v\x00", 10) + dict + std::string(117 - dict.size(), ' ') + "\n";
    EXPECT_EQ(npy::header(spec), want) << spec.str();
  }
}

TEST(Wire, Crc32cMatchesTheStandardCheckValue) {
  const char* digits = "123456789";
  EXPECT_EQ(wire::crc32c(0, digits, 9), 0xE3069283u) << "CRC-32C check value (RFC 3720)";
  // Continuing a CRC over two pieces equals one pass over both.
  std::vector<uint8_t> bytes(1000);
  std::mt19937 rng(3);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
  EXPECT_EQ(wire::crc32c(wire::crc32c(0, bytes.data(), 333), bytes.data() + 333, 667),
            wire::crc32c(0, bytes.data(), 1000));
}

TEST(Wire, EndOfStreamAndErrorMessagesRoundTrip) {
  wire::Message end;
  end.header.kind = wire::Kind::EndOfStream;
  end.header.seq = 77;
  wire::Message back = wire::decode(received(frames_of(end)));
  EXPECT_EQ(back.header.kind, wire::Kind::EndOfStream);
  EXPECT_EQ(back.header.seq, 77u);

  wire::Message error;
  error.header.kind = wire::Kind::Error;
  error.error = "stage 'fft' failed: d\xc3\xa9j\xc3\xa0 vu";
  back = wire::decode(received(frames_of(error)));
  EXPECT_EQ(back.header.kind, wire::Kind::Error);
  EXPECT_EQ(back.error, error.error);
  EXPECT_TRUE(back.tensors.empty()) << "an error message is not data";
}

TEST(Wire, APackedMessageWrittenInPlaceIsTheFrameEncodeMakes) {
  std::vector<Tensor> tensors = {test::random_tensor(s16({3, 2}), 1), test::random_tensor(c64({3}), 2)};
  const wire::Message m = test::data_message(tensors, 9, 4);
  for (bool crc : {false, true}) {
    const wire::EncodeOptions options{.crc = crc, .pack_below = 4096};
    const std::vector<std::string> f = frames_of(m, options);
    ASSERT_EQ(f.size(), 1u);
    const size_t bytes = wire::packed_bytes(m, options);
    ASSERT_EQ(bytes, f[0].size()) << "crc " << crc;
    std::string written(bytes + 1, '\x5a');  // a canary past its end
    wire::write_packed(m, options, reinterpret_cast<uint8_t*>(written.data()));
    EXPECT_EQ(written.substr(0, bytes), f[0]) << "crc " << crc;
    EXPECT_EQ(written[bytes], '\x5a') << "nothing written past its bytes";
  }
  // Not packed: too large, shared, or not data.
  EXPECT_EQ(wire::packed_bytes(m, {.pack_below = 64}), 0u);
  EXPECT_EQ(wire::packed_bytes(m, {.pack_below = 4096, .shared = true}), 0u);
  wire::Message end;
  end.header = {wire::Kind::EndOfStream, 0, 4, 10, 0, 0};
  EXPECT_EQ(wire::packed_bytes(end, {.pack_below = 4096}), 0u);
  // What encode refuses, refused as encode refuses it.
  wire::Message bad = m;
  bad.header.kind = wire::Kind::EndOfStream;
  EXPECT_THROW(wire::packed_bytes(bad, {.pack_below = 4096}), WireError);
}

TEST(Wire, SmallMessagesPackIntoOneFrameThatIsAnNpyFileAfterTheHeader) {
  std::vector<Tensor> tensors = {test::random_tensor(s16({3, 2}), 1), test::random_tensor(c64({3}), 2),
                                 test::random_tensor(f32({0}), 3)};
  wire::Message m = test::data_message(tensors, 9, 4);
  std::vector<std::string> f = frames_of(m, {.crc = true, .pack_below = 4096});
  ASSERT_EQ(f.size(), 1u) << "one frame below pack_below";
  wire::Message back = wire::decode(received(f));
  EXPECT_EQ(back.header.flags, wire::kFlagCrc | wire::kFlagPacked);
  EXPECT_EQ(back.header.seq, 9u);
  ASSERT_EQ(back.tensors.size(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) EXPECT_TRUE(test::identical(back.tensors[i], tensors[i])) << i;
  // After the header: the first tensor's .npy header and data, exactly as
  // its own two frames would be (np.load reads it from there).
  std::vector<std::string> unpacked = frames_of(test::data_message({tensors[0]}, 9, 4));
  EXPECT_EQ(f[0].substr(32, unpacked[1].size() + unpacked[2].size()), unpacked[1] + unpacked[2]);
  // Larger messages keep their frames.
  EXPECT_EQ(frames_of(m, {.pack_below = 64}).size(), 7u);
  // A packed frame cut short, or with bytes after its last tensor, is rejected.
  for (const std::string& bad : {f[0].substr(0, f[0].size() - 1), f[0] + "x"})
    EXPECT_THROW(wire::decode(received({bad})), WireError);
}

TEST(Wire, ControlMessagesCarryTheirRecordInOneFrame) {
  wire::Message credit;
  credit.header = {wire::Kind::Credit, 0, 7, 41, 0, 0};
  credit.control = {1, 2, 3, 4, 5, 6};
  std::vector<std::string> f = frames_of(credit);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].size(), wire::kHeaderBytes + wire::kControlBytes);
  wire::Message back = wire::decode(received(f));
  EXPECT_EQ(back.header.kind, wire::Kind::Credit);
  EXPECT_EQ(back.header.seq, 41u);
  EXPECT_EQ(back.control.session, 1u);
  EXPECT_EQ(back.control.next, 2u);
  EXPECT_EQ(back.control.credit_messages, 3u);
  EXPECT_EQ(back.control.credit_bytes, 4u);
  EXPECT_EQ(back.control.max_message_bytes, 5u);
  EXPECT_EQ(back.control.rewind, 6u);
  EXPECT_THROW(wire::decode(received({f[0].substr(0, 60)})), WireError) << "a record cut short";
}

// A receiver that opens a GPU's memory names its devices after its ring
// (flag bit 7), read back as written; too many, a count of none, bytes past
// the count, and the flag anywhere else are refused by name.
TEST(Wire, AReceiversRecordNamesTheDevicesItOpens) {
  wire::Message record;
  record.header = {wire::Kind::Ack, 0, 0, 20, 0, 0};
  record.control = {1, 20, 16, 1 << 20, 1 << 30, 0};
  record.shared = true;
  record.leases = {12};
  record.pid = 4321;
  IpcDeviceId first{}, second{};
  for (uint8_t i = 0; i < 16; ++i) {
    first[i] = i;
    second[i] = static_cast<uint8_t>(0xf0 | i);
  }
  record.devices = {first, second};
  std::vector<std::string> f = frames_of(record);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].size(), wire::kHeaderBytes + wire::kControlBytes + 8 + 8 + wire::kDevicesBytes);
  const wire::Message back = wire::decode(received(f));
  EXPECT_EQ(back.devices, record.devices);
  EXPECT_EQ(back.leases, record.leases);
  EXPECT_EQ(back.pid, 4321u);

  auto refused = [](std::string frame, const std::string& reason) {
    try {
      wire::decode(received({std::move(frame)}));
      ADD_FAILURE() << "taken; expected a refusal naming '" << reason << "'";
    } catch (const WireError& e) {
      EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
    }
  };
  const size_t devices_at = f[0].size() - wire::kDevicesBytes;
  std::string none = f[0];
  std::memset(none.data() + devices_at, 0, 8);
  refused(none, "device count");
  std::string nine = f[0];
  nine[devices_at] = 9;
  refused(nine, "device count");
  std::string past = f[0];
  past[devices_at + 8 + 16 * 2] = 1;
  refused(past, "zeros after the 2 named");
  std::string on_data = frames_of(test::data_message({test::random_tensor(f32({4}), 1)}, 3))[0];
  on_data[6] = static_cast<char>(on_data[6] | wire::kFlagDevices);
  refused(on_data, "devices (bit 7)");

  record.devices.assign(wire::kMaxDevices + 1, first);
  EXPECT_THROW(wire::encode(record), WireError) << "more devices than a record holds";
}

// In a shared message a data frame starting "sluice-" is a device
// reference: the text of a GPU tensor's ipc handle, which `open` opens (a
// tensor of the .npy header's spec). Without `open` (a plain channel, a
// receiver that named no devices) it is refused, and so is one that is not
// printable, too long or not an ipc handle.
TEST(Wire, DeviceReferencesAreOpenedWhereTheReceiverTakesThem) {
  const Spec spec = f32({2, 3});
  const std::vector<std::string> plain = frames_of(test::data_message({zeros(spec)}, 5));
  auto shared_with = [&](const std::string& data) {
    std::vector<std::string> f = plain;
    f[0][6] = static_cast<char>(wire::kFlagShared);
    f[2] = data;
    return f;
  };
  const std::string handle = "sluice-test-ipc:1:device=0f:memory=ab";
  std::string opened;
  Spec opened_spec;
  const wire::OpenDevice open = [&](std::string_view h, const Spec& s) {
    opened = h;
    opened_spec = s;
    return ones(s);
  };
  const wire::Message m = wire::decode(received(shared_with(handle)), {}, "test", {}, open);
  EXPECT_EQ(opened, handle);
  EXPECT_EQ(opened_spec, spec);
  ASSERT_EQ(m.tensors.size(), 1u);
  EXPECT_EQ(m.tensors[0].to_vector<float>(), std::vector<float>(6, 1.0f)) << "the tensor open gave";

  auto refused = [&](const std::string& data, const std::string& reason, const wire::OpenDevice& with) {
    try {
      wire::decode(received(shared_with(data)), {}, "test", {}, with);
      ADD_FAILURE() << "'" << data.substr(0, 40) << "' taken; expected a refusal naming '" << reason << "'";
    } catch (const WireError& e) {
      EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
    }
  };
  refused(handle, "device reference", {});
  refused(
      "sluice-test-ipc:1:bad\x01"
      "byte",
      "printable ASCII", open);
  refused(std::string("sluice-test-ipc:1:") + '\x01', "printable ASCII", open);
  refused("sluice-test-ipc:" + std::string(wire::kMaxDeviceRefBytes, 'a'), "at most 1024 bytes", open);
  refused("sluice-shm:1:pid=1", "'sluice-<platform>-ipc:...'", open);
  const wire::OpenDevice failing = [](std::string_view, const Spec&) -> Tensor {
    throw DeviceError("from_pointer: handle: expected one of a GPU of this machine, found one of GPU 0f");
  };
  refused(handle, "one of a GPU of this machine", failing);
  EXPECT_TRUE(opened == handle) << "only the good reference reached open";
}

// A message with a GPU's tensors is weighed without copying them to the
// host: the bytes its frames would hold, as encode makes them.
TEST(Wire, UnpackedBytesAreWhatEncodesFramesHold) {
  wire::Message data =
      test::data_message({test::random_tensor(f32({3, 5}), 1), test::random_tensor(c64({7}), 2)}, 9);
  size_t framed = 0;
  for (const std::string& f : frames_of(data)) framed += f.size();
  EXPECT_EQ(wire::unpacked_bytes(data), framed);
  wire::Message update = data;
  update.header.kind = wire::Kind::Update;
  update.target = "scale";
  framed = 0;
  for (const std::string& f : frames_of(update)) framed += f.size();
  EXPECT_EQ(wire::unpacked_bytes(update), framed);
  EXPECT_FALSE(wire::holds_device_tensors(data)) << "host tensors";
}

TEST(Wire, UnknownFlagBitsAreIgnored) {
  std::vector<std::string> f = frames_of(test::data_message({test::random_tensor(f32({4}), 1)}, 3));
  f[0][7] = '\x80';  // bit 15: not defined in version 1
  EXPECT_NO_THROW(wire::decode(received(f))) << "writers write 0, readers ignore";
}

TEST(Wire, RejectsEveryMalformedClassWithAWireError) {
  for (const test::Malformed& bad : test::malformed_messages()) {
    try {
      wire::decode(received(bad.frames), {}, "test");
      ADD_FAILURE() << bad.name << ": accepted";
    } catch (const WireError& e) {
      EXPECT_NE(std::string(e.what()).find(bad.reason), std::string::npos)
          << bad.name << ": expected the reason to mention '" << bad.reason << "', found: " << e.what();
    }
  }
  EXPECT_THROW(wire::decode({}), WireError) << "no frames at all";
}

TEST(Wire, RejectsMessagesAboveTheLimitBeforeMakingTensors) {
  std::vector<std::string> f = frames_of(test::data_message({test::random_tensor(f32({1024}), 1)}, 3));
  try {
    wire::decode(received(f), {.max_message_bytes = 4096}, "limited");
    ADD_FAILURE() << "a 4 KiB tensor passed a 4 KiB message limit";
  } catch (const WireError& e) {
    EXPECT_NE(std::string(e.what()).find("max_message_bytes = 4096"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(wire::decode(received(f), {.max_message_bytes = 8192}));
}

TEST(Wire, ErrorsNameTheEndpointSequenceAndTensor) {
  std::vector<std::string> f = frames_of(test::data_message({test::random_tensor(f32({2}), 1), test::random_tensor(f32({2}), 2)}, 41));
  f[4].pop_back();
  try {
    wire::decode(received(f), {}, "channel ipc:///tmp/x");
    ADD_FAILURE() << "accepted a short data frame";
  } catch (const WireError& e) {
    EXPECT_STREQ(e.what(), "channel ipc:///tmp/x: seq 41, tensor 1: data frame: expected 8 bytes for f32[2], found 7");
  }
}

TEST(Wire, RandomFramesNeverCrashTheDecoder) {
  std::mt19937 rng(7);
  const std::vector<std::string> good = frames_of(test::data_message({test::random_tensor(s16({3, 2}), 1)}, 1));
  for (int i = 0; i < 2000; ++i) {
    // Mutate a valid message: random bytes alone rarely get past the magic.
    std::vector<std::string> f = good;
    for (int k = 0, n = 1 + static_cast<int>(rng() % 4); k < n; ++k) {
      std::string& frame = f[rng() % f.size()];
      if (!frame.empty()) frame[rng() % frame.size()] = static_cast<char>(rng());
    }
    if (rng() % 4 == 0) f[rng() % f.size()].resize(rng() % 140);
    try {
      wire::decode(received(f));
    } catch (const WireError&) {
    }
  }
}

TEST(Wire, AlignedDataFramesBecomeTensorsWithoutACopy) {
  std::vector<std::string> f = frames_of(test::data_message({test::random_tensor(f64({64}), 1)}, 1));
  std::vector<wire::ReceivedFrame> frames = received(f);
  const uint8_t* frame_data = frames[2].bytes.data();
  wire::Message m = wire::decode(frames);
  EXPECT_EQ(m.tensors[0].host_data(), frame_data) << "an aligned frame is wrapped, not copied";

  // The same bytes one past an aligned address: copied into aligned memory.
  auto shifted = std::make_shared<std::string>("x" + f[2]);
  frames = received(f);
  frames[2] = {{reinterpret_cast<const uint8_t*>(shifted->data()) + 1, f[2].size()}, shifted};
  m = wire::decode(frames);
  EXPECT_NE(m.tensors[0].host_data(), static_cast<const void*>(shifted->data() + 1));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(m.tensors[0].host_data()) % 8, 0u);
  EXPECT_EQ(m.tensors[0].to_vector<double>(), test::random_tensor(f64({64}), 1).to_vector<double>());
}

wire::Message barrier_message(uint64_t checkpoint, uint64_t seq, uint64_t stream_id) {
  wire::Message m;
  m.header = {wire::Kind::Barrier, 0, stream_id, seq, 0, 0};
  m.checkpoint = checkpoint;
  return m;
}

TEST(Wire, CheckpointBarriersRoundTripWithTheirNumberAfterTheHeader) {
  std::vector<std::string> f = frames_of(barrier_message(0x2122232425262728, 0x0102030405060708, 9));
  ASSERT_EQ(f.size(), 1u) << "one frame, like a control message";
  const std::string want(
      "SLCE\x01\x05\x00\x00"
      "\x09\x00\x00\x00\x00\x00\x00\x00"
      "\x08\x07\x06\x05\x04\x03\x02\x01"
      "\x00\x00\x00\x00"
      "\x00\x00\x00\x00"
      "\x28\x27\x26\x25\x24\x23\x22\x21",
      40);
  EXPECT_EQ(f[0], want) << "header (kind 5, count 0), then the checkpoint number as a little-endian u64";
  wire::Message back = wire::decode(received(f));
  EXPECT_EQ(back.header.kind, wire::Kind::Barrier);
  EXPECT_EQ(back.header.seq, 0x0102030405060708u);
  EXPECT_EQ(back.header.stream_id, 9u);
  EXPECT_EQ(back.checkpoint, 0x2122232425262728u);
  EXPECT_TRUE(back.tensors.empty());
  EXPECT_EQ(wire::kind_name(wire::Kind::Barrier), "checkpoint barrier");
  // With the CRC flag (a channel's crc option) it still reads back: it has no data frames, so its CRC is 0.
  back = wire::decode(received(frames_of(barrier_message(3, 4, 0), {.crc = true, .pack_below = 4096})));
  EXPECT_EQ(back.header.flags, wire::kFlagCrc) << "a barrier is never packed";
  EXPECT_EQ(back.checkpoint, 3u);
}

TEST(Wire, RejectsMalformedBarriersNamingWhatWasWrong) {
  const std::string good = frames_of(barrier_message(7, 12, 1)).at(0);
  struct Case {
    const char* name;
    std::vector<std::string> frames;
    const char* reason;
  };
  std::string counted = good, packed = good, crc = good;
  counted[24] = 1;
  packed[6] = wire::kFlagPacked;
  crc[28] = 1;
  const Case cases[] = {
      {"checkpoint number cut short", {good.substr(0, 39)}, "expected 40 bytes for kind checkpoint barrier"},
      {"header alone",
       {good.substr(0, 32)},
       "expected 40 bytes for kind checkpoint barrier (the header, then its u64"},
      {"a byte too many", {good + "x"}, "found 41"},
      {"the number in a frame of its own", {good.substr(0, 32), good.substr(32)}, "expected 40 bytes"},
      {"an extra frame", {good, "x"}, "expected 1 frames, found 2"},
      {"a tensor count", {counted}, "tensor count: expected 0 for kind checkpoint barrier, found 1"},
      {"packed", {packed}, "expected packed (bit 1) only on data messages"},
      {"a crc without its flag", {crc}, "crc: expected 0"},
  };
  for (const Case& c : cases) {
    try {
      wire::decode(received(c.frames), {}, "test");
      ADD_FAILURE() << c.name << ": accepted";
    } catch (const WireError& e) {
      EXPECT_NE(std::string(e.what()).find(c.reason), std::string::npos)
          << c.name << ": expected the reason to mention '" << c.reason << "', found: " << e.what();
    }
  }
  uint8_t short_number[4] = {};
  EXPECT_THROW(wire::read_checkpoint({short_number, 4}, "test"), WireError);
}

wire::Message update_message(std::string target, std::vector<Tensor> tensors, uint64_t seq, uint64_t stream_id) {
  wire::Message m;
  m.header = {wire::Kind::Update, 0, stream_id, seq, 0, 0};
  m.target = std::move(target);
  m.tensors = std::move(tensors);
  return m;
}

TEST(Wire, UpdatesCarryTheirTargetInFrameOneThenTheTensorsAsData) {
  const std::vector<Tensor> weights = {test::random_tensor(f32({2, 2}), 1), test::random_tensor(s64({3}), 2)};
  // Small enough to pack, and a CRC: an update is never packed, and its CRC covers the data frames.
  std::vector<std::string> f =
      frames_of(update_message("scale", weights, 0x0102030405060708, 9), {.crc = true, .pack_below = 1 << 20});
  ASSERT_EQ(f.size(), 6u) << "header, target, then two frames per tensor";
  EXPECT_EQ(f[0].size(), wire::kHeaderBytes);
  EXPECT_EQ(f[0][5], 7) << "kind 7";
  EXPECT_EQ(f[0][6], wire::kFlagCrc) << "the CRC flag and never the packed one";
  EXPECT_EQ(f[0][24], 2) << "count: the tensors";
  EXPECT_EQ(f[1], "scale");
  const std::vector<std::string> data = frames_of(test::data_message(weights, 0), {.crc = true});
  EXPECT_EQ(std::vector<std::string>(f.begin() + 2, f.end()), std::vector<std::string>(data.begin() + 1, data.end()))
      << "a data message's tensor frames, after the target";
  EXPECT_EQ(f[0].substr(28), data[0].substr(28)) << "the same CRC: the data frames only, not the name";

  wire::Message back = wire::decode(received(f));
  EXPECT_EQ(back.header.kind, wire::Kind::Update);
  EXPECT_EQ(back.header.seq, 0x0102030405060708u);
  EXPECT_EQ(back.header.stream_id, 9u);
  EXPECT_EQ(back.target, "scale");
  ASSERT_EQ(back.tensors.size(), 2u);
  EXPECT_TRUE(test::identical(back.tensors[0], weights[0]));
  EXPECT_TRUE(test::identical(back.tensors[1], weights[1]));
  EXPECT_EQ(wire::kind_name(wire::Kind::Update), "update");

  // parse gives the target as a view of frame 1.
  std::vector<wire::Bytes> views;
  for (const std::string& frame : f) views.push_back({reinterpret_cast<const uint8_t*>(frame.data()), frame.size()});
  EXPECT_EQ(wire::parse(views).target, "scale");
  EXPECT_EQ(wire::parse(views).target.data(), f[1].data());

  const std::string name = "stage \xc3\xa9t\xc3\xa9 \xce\xbc";  // UTF-8 beyond ASCII
  back = wire::decode(received(frames_of(update_message(name, {weights[0]}, 1, 0))));
  EXPECT_EQ(back.target, name);
  back = wire::decode(received(frames_of(update_message(std::string(wire::kMaxTargetBytes, 'a'), {weights[0]}, 1, 0))));
  EXPECT_EQ(back.target.size(), wire::kMaxTargetBytes) << "the longest name";
}

TEST(Wire, RejectsMalformedUpdatesNamingWhatWasWrong) {
  const std::vector<std::string> good =
      frames_of(update_message("scale", {test::random_tensor(f32({2}), 1)}, 3, 1), {.crc = true});
  struct Case {
    const char* name;
    std::vector<std::string> frames;
    const char* reason;
  };
  auto changed = [&](auto change) {
    std::vector<std::string> f = good;
    change(f);
    return f;
  };
  const Case cases[] = {
      {"missing name frame", changed([](auto& f) { f.erase(f.begin() + 1); }),
       "seq 3: kind update, count 1: expected 4 frames, found 3"},
      {"empty name", changed([](auto& f) { f[1].clear(); }),
       "test: seq 3: update target: expected a name of 1 to 1024 bytes, found 0"},
      {"name too long", changed([](auto& f) { f[1] = std::string(1025, 'a'); }),
       "update target: expected a name of 1 to 1024 bytes, found 1025"},
      {"name not UTF-8", changed([](auto& f) { f[1] = "sc\xff\xfele"; }),
       "test: seq 3: update target: expected UTF-8 text, found invalid bytes"},
      {"name an overlong encoding", changed([](auto& f) { f[1] = "\xc0\xaf"; }), "update target: expected UTF-8"},
      {"count above the tensors", changed([](auto& f) { f[0][24] = 2; }),
       "kind update, count 2: expected 6 frames, found 4"},
      {"count below the tensors", changed([](auto& f) { f[0][24] = 0; }),
       "tensor count: expected at least 1 for kind update, found 0"},
      {"no tensors", changed([](auto& f) {
         f[0][24] = 0;
         f.resize(2);
       }),
       "tensor count: expected at least 1 for kind update, found 0"},
      {"a tensor frame missing", changed([](auto& f) { f.pop_back(); }), "expected 4 frames, found 3"},
      {"packed", changed([](auto& f) { f[0][6] |= wire::kFlagPacked; }),
       "expected packed (bit 1) only on data messages, found it on kind update"},
      {"data frame too short", changed([](auto& f) { f[3].pop_back(); }), "tensor 0: data frame: expected 8 bytes"},
      {"crc mismatch", changed([](auto& f) { f[3][0] ^= 1; }), "CRC-32C mismatch"},
      {"bad npy header", changed([](auto& f) { f[2][0] = 'X'; }), "tensor 0"},
  };
  for (const Case& c : cases) {
    try {
      wire::decode(received(c.frames), {}, "test");
      ADD_FAILURE() << c.name << ": accepted";
    } catch (const WireError& e) {
      EXPECT_NE(std::string(e.what()).find(c.reason), std::string::npos)
          << c.name << ": expected the reason to mention '" << c.reason << "', found: " << e.what();
    }
  }
}

TEST(Wire, EncodeRefusesWhatAReaderWouldReject) {
  wire::Message unknown;
  unknown.header.kind = static_cast<wire::Kind>(8);
  EXPECT_THROW(wire::encode(unknown), WireError) << "no kind above update";
  const std::vector<Tensor> one = {test::random_tensor(f32({1}), 1)};
  EXPECT_THROW(wire::encode(update_message("", one, 0, 0)), WireError) << "an update names its target";
  EXPECT_THROW(wire::encode(update_message("\xff", one, 0, 0)), WireError) << "in UTF-8";
  EXPECT_THROW(wire::encode(update_message(std::string(wire::kMaxTargetBytes + 1, 'a'), one, 0, 0)), WireError)
      << "of at most kMaxTargetBytes";
  EXPECT_THROW(wire::encode(update_message("scale", {}, 0, 0)), WireError) << "and carries tensors";
  wire::Message data_with_target = test::data_message(one, 0);
  data_with_target.target = "ignored";
  EXPECT_EQ(frames_of(data_with_target).size(), 3u) << "only an update writes its target";
  wire::Message barrier = barrier_message(1, 0, 0);
  barrier.tensors = {test::random_tensor(f32({1}), 1)};
  EXPECT_THROW(wire::encode(barrier), WireError) << "a barrier carries its checkpoint number, not tensors";
  wire::Message credit;
  credit.header.kind = wire::Kind::Credit;
  credit.tensors = {test::random_tensor(f32({1}), 1)};
  EXPECT_THROW(wire::encode(credit), WireError) << "a control message carries its record, not tensors";
  wire::Message end;
  end.header.kind = wire::Kind::EndOfStream;
  end.tensors = {test::random_tensor(f32({1}), 1)};
  EXPECT_THROW(wire::encode(end), WireError) << "an end of stream carries no tensors";
  wire::Message error;
  error.header.kind = wire::Kind::Error;
  error.error = "\xff";
  EXPECT_THROW(wire::encode(error), WireError) << "error text must be UTF-8";
}

}  // namespace
}  // namespace sluice
