// CPU kernel of AudioSummaryV2: up to max_outputs clips of a [batch, frames]
// or [batch, frames, channels] float tensor as 16-bit PCM WAV in
// Summary.Audio values, with TensorFlow's tags and sample conversion
// (kernels/summary_audio_op.cc, lib/wav/wav_io.cc; tf_proto_facts.md §10).
// libsndfile writes the WAV container.
#include <graphrt/sdk/sdk.h>
#include <sndfile.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "graphrt/summary/summary.pb.h"
#include "summary/cpu/summary_util.h"

namespace graphrt {
namespace sdk {
namespace {

namespace pb = ::graphrt::summary;

// libsndfile's virtual I/O over a growing in-memory file.
struct MemoryFile {
  std::string bytes;
  sf_count_t pos = 0;

  static sf_count_t Length(void* self) { return static_cast<sf_count_t>(static_cast<MemoryFile*>(self)->bytes.size()); }
  static sf_count_t Seek(sf_count_t offset, int whence, void* self) {
    MemoryFile* f = static_cast<MemoryFile*>(self);
    const sf_count_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? f->pos : static_cast<sf_count_t>(f->bytes.size());
    if (base + offset < 0) return -1;
    f->pos = base + offset;
    return f->pos;
  }
  static sf_count_t Read(void* ptr, sf_count_t count, void* self) {
    MemoryFile* f = static_cast<MemoryFile*>(self);
    const sf_count_t size = static_cast<sf_count_t>(f->bytes.size());
    const sf_count_t n = std::max<sf_count_t>(0, std::min(count, size - f->pos));
    if (n > 0) std::memcpy(ptr, f->bytes.data() + f->pos, static_cast<size_t>(n));
    f->pos += n;
    return n;
  }
  static sf_count_t Write(const void* ptr, sf_count_t count, void* self) {
    MemoryFile* f = static_cast<MemoryFile*>(self);
    const size_t end = static_cast<size_t>(f->pos + count);
    if (count <= 0) return 0;
    if (end > f->bytes.size()) f->bytes.resize(end);
    std::memcpy(f->bytes.data() + f->pos, ptr, static_cast<size_t>(count));
    f->pos += count;
    return count;
  }
  static sf_count_t Tell(void* self) { return static_cast<MemoryFile*>(self)->pos; }
};

// TensorFlow's float-to-PCM rule: round(x * 32768), clamped to int16.
int16_t ToSample(float x) {
  const float v = std::round(x * 32768.0f);
  return static_cast<int16_t>(std::min(32767.0f, std::max(-32768.0f, v)));
}

// `frames` x `channels` interleaved float samples as a 16-bit PCM WAV.
Status EncodeWav(const float* samples, int64_t frames, int64_t channels, int sample_rate, std::string* out) {
  std::vector<int16_t> pcm(static_cast<size_t>(frames * channels));
  for (size_t i = 0; i < pcm.size(); ++i) pcm[i] = ToSample(samples[i]);
  MemoryFile file;
  SF_VIRTUAL_IO io{&MemoryFile::Length, &MemoryFile::Seek, &MemoryFile::Read, &MemoryFile::Write, &MemoryFile::Tell};
  SF_INFO info{};
  info.samplerate = sample_rate;
  info.channels = static_cast<int>(channels);
  info.format = SF_FORMAT_WAV | SF_FORMAT_PCM_16;
  SNDFILE* sf = sf_open_virtual(&io, SFM_WRITE, &info, &file);
  if (sf == nullptr) return errors::InvalidArgument("WAV encoding failed: ", sf_strerror(nullptr));
  const sf_count_t written = frames > 0 ? sf_writef_short(sf, pcm.data(), frames) : 0;
  const std::string error = written == frames ? "" : sf_strerror(sf);
  if (sf_close(sf) != 0 || !error.empty()) return errors::Internal("WAV encoding failed: ", error);
  *out = std::move(file.bytes);
  return Status();
}

class AudioSummaryV2Op : public OpKernel {
 public:
  explicit AudioSummaryV2Op(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("max_outputs", &max_outputs_));
    OP_REQUIRES(c, max_outputs_ >= 1, errors::InvalidArgument("max_outputs must be >= 1, got ", max_outputs_));
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView tag = ctx->input(0);
    const TensorView tensor = ctx->input(1);
    const TensorView rate = ctx->input(2);
    OP_REQUIRES(ctx, tag.IsScalar(), errors::InvalidArgument("Tag must be a scalar"));
    OP_REQUIRES(ctx, tensor.rank() == 2 || tensor.rank() == 3,
                errors::InvalidArgument("Tensor must be 3-D or 2-D, got: ", tensor.ShapeString()));
    OP_REQUIRES(ctx, rate.NumElements() == 1,
                errors::InvalidArgument("sample_rate must be rank-0 or contain a single value"));
    const float sample_rate = rate.data<float>()[0];
    OP_REQUIRES(ctx, sample_rate > 0.0f, errors::InvalidArgument("sample_rate must be > 0"));
    // A WAV header holds the rate as a 32-bit integer (libsndfile: an int).
    OP_REQUIRES(ctx, sample_rate < 2147483520.0f && std::lrintf(sample_rate) >= 1,
                errors::InvalidArgument("sample_rate ", sample_rate, " does not fit a WAV header"));
    const int64_t batch = tensor.dim(0);
    const int64_t frames = tensor.dim(1);
    const int64_t channels = tensor.rank() == 2 ? 1 : tensor.dim(2);
    OP_REQUIRES(ctx, channels >= 1 && channels <= 1024,
                errors::InvalidArgument("audio must have 1 to 1024 channels, got ", channels));
    int64_t clip = 0;
    OP_REQUIRES_OK(ctx, MultiplyDims(frames, channels, &clip));
    // The RIFF sizes are 32-bit: 2 bytes a sample plus the header.
    OP_REQUIRES(ctx, clip <= (int64_t{UINT32_MAX} - 64) / 2,
                errors::InvalidArgument("audio clip of ", frames, " frames x ", channels, " channels is too long for WAV"));
    const std::string_view base = summary_util::StringAt(tag, 0);
    const int64_t n = std::min(max_outputs_, batch);
    pb::Summary s;
    for (int64_t i = 0; i < n; ++i) {
      pb::Summary::Value* v = s.add_value();
      // The tag depends on max_outputs, not on how many clips there are.
      v->set_tag(std::string(base) + (max_outputs_ > 1 ? "/audio/" + std::to_string(i) : "/audio"));
      pb::Summary::Audio* a = v->mutable_audio();
      a->set_sample_rate(sample_rate);
      a->set_num_channels(channels);
      a->set_length_frames(frames);
      a->set_content_type("audio/wav");
      OP_REQUIRES_OK(ctx, EncodeWav(tensor.data<float>() + i * clip, frames, channels,
                                    static_cast<int>(std::lrintf(sample_rate)), a->mutable_encoded_audio_string()));
    }
    summary_util::OutputSummary(ctx, s);
  }

 private:
  int64_t max_outputs_ = 3;
};

REGISTER_KERNEL(Name("AudioSummaryV2").Device(DEVICE_CPU), AudioSummaryV2Op);

}  // namespace
}  // namespace sdk
}  // namespace graphrt
