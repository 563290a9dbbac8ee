// CPU kernel of AudioSummaryV2: up to max_outputs clips of a [batch, frames]
// or [batch, frames, channels] float tensor as 16-bit PCM WAV in
// Summary.Audio values, with TensorFlow's tags and sample conversion
// (kernels/summary_audio_op.cc, lib/wav/wav_io.cc; tf_proto_facts.md §10).
#include <graphrt/sdk/sdk.h>

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

// TensorFlow's float-to-PCM rule: round(x * 32768), clamped to int16.
int16_t ToSample(float x) {
  const float v = std::round(x * 32768.0f);
  return static_cast<int16_t>(std::min(32767.0f, std::max(-32768.0f, v)));
}

// Appends v as `bytes` little-endian bytes.
void PutLittleEndian(std::string* out, uint32_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// `frames` x `channels` interleaved float samples as a 16-bit PCM WAV: the
// canonical 44-byte RIFF header (RIFF/WAVE, a 16-byte "fmt " chunk with
// format 1 = PCM, then "data"), as TensorFlow's wav_io writes it. Written
// here rather than through libsndfile, which would load some sixteen codec
// libraries into every process that loads the standard plugins (and whose
// thread-local storage crashes LeakSanitizer's exit-time scan).
Status EncodeWav(const float* samples, int64_t frames, int64_t channels, int sample_rate, std::string* out) {
  constexpr int64_t kHeaderBytes = 44, kBytesPerSample = 2;
  const int64_t data_bytes = frames * channels * kBytesPerSample;
  if (channels < 1 || channels > 0xffff || data_bytes > 0xffffffffLL - (kHeaderBytes - 8))
    return errors::InvalidArgument("a WAV file cannot hold ", frames, " frames of ", channels, " channels");
  std::string wav;
  wav.reserve(static_cast<size_t>(kHeaderBytes + data_bytes));
  wav += "RIFF";
  PutLittleEndian(&wav, static_cast<uint32_t>(kHeaderBytes - 8 + data_bytes), 4);
  wav += "WAVEfmt ";
  PutLittleEndian(&wav, 16, 4);                                   // fmt chunk size
  PutLittleEndian(&wav, 1, 2);                                    // PCM
  PutLittleEndian(&wav, static_cast<uint32_t>(channels), 2);
  PutLittleEndian(&wav, static_cast<uint32_t>(sample_rate), 4);
  PutLittleEndian(&wav, static_cast<uint32_t>(sample_rate * channels * kBytesPerSample), 4);  // byte rate
  PutLittleEndian(&wav, static_cast<uint32_t>(channels * kBytesPerSample), 2);               // block align
  PutLittleEndian(&wav, 16, 2);                                   // bits per sample
  wav += "data";
  PutLittleEndian(&wav, static_cast<uint32_t>(data_bytes), 4);
  for (int64_t i = 0; i < frames * channels; ++i)
    PutLittleEndian(&wav, static_cast<uint16_t>(ToSample(samples[i])), 2);
  *out = std::move(wav);
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
    // A WAV header holds the rate as a 32-bit integer.
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
