#include "core/read/gzip.h"

#include <zlib.h>
#ifdef ATTNSCOPE_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

#include <algorithm>
#include <cstring>

namespace attnscope {

bool isGzip(const char* data, size_t size) {
  return size >= 2 && static_cast<unsigned char>(data[0]) == 0x1f && static_cast<unsigned char>(data[1]) == 0x8b;
}

uint64_t gzipSizeHint(const char* data, size_t size) {
  if (!isGzip(data, size) || size < 18) return 0;
  const auto* p = reinterpret_cast<const unsigned char*>(data + size - 4);
  return uint64_t{p[0]} | (uint64_t{p[1]} << 8) | (uint64_t{p[2]} << 16) | (uint64_t{p[3]} << 24);
}

namespace {
constexpr size_t kStepBytes = size_t{1} << 30;  // both libraries count in 32 bits
}  // namespace

// One inflate step over a member: consumes input, produces output, says
// whether the member ended or what went wrong.
#ifdef ATTNSCOPE_HAVE_ISAL
const char* gunzipBackend() { return "isa-l"; }

struct GunzipStream::Impl {
  inflate_state st{};
  Impl() { startMember(); }
  void startMember() {
    isal_inflate_init(&st);
    st.crc_flag = ISAL_GZIP;
  }
  // Returns "" or an error detail.
  const char* step(const char* in, size_t inLen, char* out, size_t outLen, size_t* usedIn, size_t* madeOut,
                   bool* ended) {
    st.next_in = reinterpret_cast<uint8_t*>(const_cast<char*>(in));
    st.avail_in = static_cast<uint32_t>(inLen);
    st.next_out = reinterpret_cast<uint8_t*>(out);
    st.avail_out = static_cast<uint32_t>(outLen);
    const int ret = isal_inflate(&st);
    *usedIn = inLen - st.avail_in;
    *madeOut = outLen - st.avail_out;
    *ended = st.block_state == ISAL_BLOCK_FINISH;
    if (ret == ISAL_INCORRECT_CHECKSUM) return "checksum mismatch";
    if (ret == ISAL_INVALID_WRAPPER) return "invalid gzip header";
    if (ret < 0) return "invalid deflate data";
    return "";
  }
};
#else
const char* gunzipBackend() { return "zlib"; }

struct GunzipStream::Impl {
  z_stream zs{};
  bool ok = false;
  Impl() { ok = inflateInit2(&zs, 15 + 32) == Z_OK; }
  ~Impl() {
    if (ok) inflateEnd(&zs);
  }
  void startMember() { inflateReset(&zs); }
  const char* step(const char* in, size_t inLen, char* out, size_t outLen, size_t* usedIn, size_t* madeOut,
                   bool* ended) {
    if (!ok) return "cannot initialise zlib";
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in));
    zs.avail_in = static_cast<uInt>(inLen);
    zs.next_out = reinterpret_cast<Bytef*>(out);
    zs.avail_out = static_cast<uInt>(outLen);
    const int ret = inflate(&zs, Z_NO_FLUSH);
    *usedIn = inLen - zs.avail_in;
    *madeOut = outLen - zs.avail_out;
    *ended = ret == Z_STREAM_END;
    if (ret != Z_OK && ret != Z_STREAM_END && ret != Z_BUF_ERROR) return zs.msg ? zs.msg : "invalid deflate data";
    return "";
  }
};
#endif

GunzipStream::GunzipStream(const char* data, size_t size, uint64_t maxOut)
    : impl_(std::make_unique<Impl>()), data_(data), size_(size), maxOut_(maxOut) {}

GunzipStream::~GunzipStream() = default;

bool GunzipStream::fail(std::string message) {
  error_ = std::move(message);
  return false;
}

bool GunzipStream::read(char* out, size_t cap, size_t* got) {
  *got = 0;
  if (!error_.empty()) return false;
  while (*got < cap && !done_) {
    if (memberEnded_) {
      // Concatenated members: go on while what follows looks like gzip.
      if (consumed_ < size_ && isGzip(data_ + consumed_, size_ - consumed_)) {
        impl_->startMember();
        memberEnded_ = false;
      } else {
        done_ = true;
        break;
      }
    }
    // Never produce more than one byte past the cap: that byte is the proof.
    const uint64_t allowed = maxOut_ - std::min(maxOut_, produced_) + 1;
    const size_t room = static_cast<size_t>(std::min<uint64_t>({cap - *got, kStepBytes, allowed}));
    size_t usedIn = 0, madeOut = 0;
    const char* err = impl_->step(data_ + consumed_, std::min(size_ - consumed_, kStepBytes), out + *got, room, &usedIn,
                                  &madeOut, &memberEnded_);
    consumed_ += usedIn;
    *got += madeOut;
    produced_ += madeOut;
    if (produced_ > maxOut_)
      return fail("decompressed size exceeds the limit of " + std::to_string(maxOut_) +
                  " bytes (a gzip bomb, or raise --max-decompressed)");
    if (*err) return fail("gzip data is corrupt near compressed byte " + std::to_string(consumed_) + " (" + err + ")");
    if (!memberEnded_ && usedIn == 0 && madeOut == 0) {
      if (consumed_ < size_) return fail("gzip data is corrupt near compressed byte " + std::to_string(consumed_));
      // Cut short (a killed writer, a partial download): what came out so far is the text.
      truncated_ = true;
      done_ = true;
      break;
    }
    if (memberEnded_ && consumed_ >= size_) done_ = true;
  }
  return true;
}

bool gunzip(const char* data, size_t size, uint64_t maxOut, size_t padding, std::vector<char>* out, size_t* outSize,
            std::string* error, uint64_t* truncatedAt, bool* overLimit) {
  GunzipStream z(data, size, maxOut);
  // The trailer's size (exact for one member under 4 GiB) sizes the buffer
  // once; otherwise guess 6x and grow geometrically. A cut file's "trailer" is
  // whatever bytes it ends with, so a hint past 100x the input is not trusted.
  const uint64_t hint = gzipSizeHint(data, size);
  const bool plausible = hint >= size && hint / 100 <= size;
  size_t cap = static_cast<size_t>(
      std::min<uint64_t>(plausible ? hint + 1 : std::max<uint64_t>(uint64_t{size} * 6, 1 << 16), maxOut + 1));
  out->resize(cap + padding);
  size_t produced = 0;
  while (true) {
    size_t got = 0;
    if (!z.read(out->data() + produced, cap - produced, &got)) {
      *error = z.error();
      if (overLimit) *overLimit = z.overLimit();
      return false;
    }
    produced += got;
    if (z.done()) break;
    if (produced == cap) {
      cap = static_cast<size_t>(std::min<uint64_t>(uint64_t{cap} * 2, maxOut + 1));
      out->resize(cap + padding);
    }
  }
  std::memset(out->data() + produced, 0, std::min(out->size() - produced, padding));
  *outSize = produced;
  if (truncatedAt) *truncatedAt = z.truncated() ? z.consumed() : 0;
  return true;
}

}  // namespace attnscope
