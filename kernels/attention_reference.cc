// CPU references for paged decode and chunked-prefill attention, and the
// naive float64 attention both are tested against (see reference.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/reference.h"

namespace servesim::kernels {

const float* PagedKvRef::KeyRow(int b, int t, int h) const {
  int blk = block_table[static_cast<int64_t>(b) * max_blocks_per_seq +
                        t / block_size];
  int64_t slot = static_cast<int64_t>(blk) * block_size + t % block_size;
  return k + (slot * kv_heads + h) * head_dim;
}

const float* PagedKvRef::ValueRow(int b, int t, int h) const {
  return v + (KeyRow(b, t, h) - k);
}

void NaivePagedAttention64(const float* q, const PagedKvRef& kv,
                           int num_queries, const int32_t* query_seq,
                           const int32_t* query_visible, int heads,
                           double scale, std::vector<double>* out) {
  const int d = kv.head_dim, group = heads / kv.kv_heads;
  out->assign(static_cast<size_t>(num_queries) * heads * d, 0.0);
  std::vector<double> s;
  for (int r = 0; r < num_queries; ++r) {
    for (int h = 0; h < heads; ++h) {
      const float* qr = q + (static_cast<int64_t>(r) * heads + h) * d;
      const int n = query_visible[r], b = query_seq[r], kvh = h / group;
      s.assign(n, 0.0);
      double mx = -std::numeric_limits<double>::infinity();
      for (int j = 0; j < n; ++j) {
        const float* kr = kv.KeyRow(b, j, kvh);
        double dot = 0;
        for (int i = 0; i < d; ++i) dot += double(qr[i]) * kr[i];
        s[j] = dot * scale;
        mx = std::max(mx, s[j]);
      }
      double sum = 0;
      for (int j = 0; j < n; ++j) sum += (s[j] = std::exp(s[j] - mx));
      double* o = out->data() + (static_cast<int64_t>(r) * heads + h) * d;
      for (int j = 0; j < n; ++j) {
        const float* vr = kv.ValueRow(b, j, kvh);
        for (int i = 0; i < d; ++i) o[i] += s[j] / sum * vr[i];
      }
    }
  }
}

namespace {

// Running state of one online softmax: m = max score so far, l = sum of
// exp(s - m), acc = sum of exp(s - m) v. Adding a tile rescales the old
// state by exp(m_old - m_new); the result is acc / l.
struct OnlineSoftmax {
  float m = -std::numeric_limits<float>::infinity();
  float l = 0;
  std::vector<float> acc;

  void AddTile(const std::vector<float>& scores,
               const std::vector<const float*>& values, int d) {
    float mx = m;
    for (float s : scores) mx = std::max(mx, s);
    if (mx == -std::numeric_limits<float>::infinity()) return;
    const float alpha = std::exp(m - mx);
    l *= alpha;
    for (float& a : acc) a *= alpha;
    for (size_t j = 0; j < scores.size(); ++j) {
      const float p = std::exp(scores[j] - mx);
      l += p;
      for (int i = 0; i < d; ++i) acc[i] += p * values[j][i];
    }
    m = mx;
  }
};

// Scores of query qr against keys [begin, end) of sequence b (keys at or
// beyond `visible` masked out by omission).
void ScoreTile(const float* qr, const PagedKvRef& kv, int b, int kvh,
               int begin, int end, float scale, std::vector<float>* scores,
               std::vector<const float*>* values) {
  scores->clear();
  values->clear();
  for (int j = begin; j < end; ++j) {
    const float* kr = kv.KeyRow(b, j, kvh);
    float dot = 0;
    for (int i = 0; i < kv.head_dim; ++i) dot += qr[i] * kr[i];
    scores->push_back(dot * scale);
    values->push_back(kv.ValueRow(b, j, kvh));
  }
}

}  // namespace

void PagedDecodeAttentionRef(const float* q, const PagedKvRef& kv,
                             const int32_t* seq_lens, int batch, int heads,
                             float scale, int partition, float* out) {
  const int d = kv.head_dim, group = heads / kv.kv_heads;
  std::vector<float> scores;
  std::vector<const float*> values;
  for (int b = 0; b < batch; ++b) {
    for (int h = 0; h < heads; ++h) {
      const float* qr = q + (static_cast<int64_t>(b) * heads + h) * d;
      float* o = out + (static_cast<int64_t>(b) * heads + h) * d;
      std::vector<OnlineSoftmax> parts;
      for (int p0 = 0; p0 < seq_lens[b]; p0 += partition) {
        OnlineSoftmax part;
        part.acc.assign(d, 0.f);
        ScoreTile(qr, kv, b, h / group, p0, std::min(p0 + partition, seq_lens[b]),
                  scale, &scores, &values);
        part.AddTile(scores, values, d);
        parts.push_back(std::move(part));
      }
      // Combine: M = max m_s, L = sum l_s e^(m_s - M), o = sum acc_s e^(m_s-M) / L.
      float mx = -std::numeric_limits<float>::infinity();
      for (const auto& p : parts) mx = std::max(mx, p.m);
      float total = 0;
      for (int i = 0; i < d; ++i) o[i] = 0;
      for (const auto& p : parts) {
        const float w = std::exp(p.m - mx);
        total += p.l * w;
        for (int i = 0; i < d; ++i) o[i] += p.acc[i] * w;
      }
      for (int i = 0; i < d; ++i) o[i] = total > 0 ? o[i] / total : 0.f;
    }
  }
}

void PrefillAttentionRef(const float* q, const PagedKvRef& kv,
                         const int32_t* q_start, const int32_t* context_lens,
                         int batch, int heads, float scale, int tile,
                         float* out) {
  const int d = kv.head_dim, group = heads / kv.kv_heads;
  std::vector<float> scores;
  std::vector<const float*> values;
  for (int b = 0; b < batch; ++b) {
    for (int r = q_start[b]; r < q_start[b + 1]; ++r) {
      const int visible = context_lens[b] + (r - q_start[b]) + 1;
      for (int h = 0; h < heads; ++h) {
        const float* qr = q + (static_cast<int64_t>(r) * heads + h) * d;
        OnlineSoftmax st;
        st.acc.assign(d, 0.f);
        for (int j0 = 0; j0 < visible; j0 += tile) {
          ScoreTile(qr, kv, b, h / group, j0, std::min(j0 + tile, visible),
                    scale, &scores, &values);
          st.AddTile(scores, values, d);
        }
        float* o = out + (static_cast<int64_t>(r) * heads + h) * d;
        for (int i = 0; i < d; ++i) o[i] = st.acc[i] / st.l;
      }
    }
  }
}

double RelativeError(const float* a, const double* b, size_t n) {
  double num = 0, den = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(a[i])) return std::numeric_limits<double>::infinity();
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

double RelativeError(const float* a, const float* b, size_t n) {
  std::vector<double> bd(b, b + n);
  return RelativeError(a, bd.data(), n);
}

}  // namespace servesim::kernels
