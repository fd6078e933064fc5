/* TenSet-style networks as weighted task lists: each network (batch 1, float32) split into the
 * workload-library operators it runs, deduplicated, each with its weight w = the number of times
 * it occurs. Shapes follow the architectures' published definitions (cited per network); a
 * subgraph whose fused epilogue (bias, batch norm, activation, residual add) the library has no
 * operator for is represented by its main operator. The learned cost models' dataset and
 * `portent bench learn` read these lists (docs/networks.md). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct {
  pc_network *net;
  pt_diag *d;
  int err;
} net_builder;

/* Adds one occurrence of op:params (dedupes by the canonical key; weights add up). */
static void add_task(net_builder *b, int weight, const char *op, int n, ...) {
  if (b->err) return;
  char spec[sizeof b->net->tasks[0].spec];
  size_t len = (size_t)snprintf(spec, sizeof spec, "%s:", op);
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) len += (size_t)snprintf(spec + len, sizeof spec - len, "%s%lld", i ? "," : "", va_arg(ap, long long));
  va_end(ap);
  pc_network *net = b->net;
  for (int i = 0; i < net->n_tasks; i++)
    if (strcmp(net->tasks[i].spec, spec) == 0) {
      net->tasks[i].weight += weight;
      return;
    }
  pc_program *p = pc_workload_build(spec, b->d);
  if (!p) {
    char why[sizeof b->d->msg];
    snprintf(why, sizeof why, "%s", b->d->msg);
    pt_fail(b->d, PT_ERR_INVALID, "network %s: task %s: %s", net->name, spec, why);
    b->err = -1;
    return;
  }
  if (net->n_tasks == net->cap) {
    net->cap = net->cap ? 2 * net->cap : 32;
    net->tasks = realloc(net->tasks, sizeof *net->tasks * (size_t)net->cap);
  }
  pc_network_task *t = &net->tasks[net->n_tasks++];
  memset(t, 0, sizeof *t);
  snprintf(t->spec, sizeof t->spec, "%s", spec);
  snprintf(t->key, sizeof t->key, "%s", p->key);
  snprintf(t->op, sizeof t->op, "%s", op);
  t->weight = weight;
  t->flops = p->flops;
  pc_program_free(p);
}

/* Layer helpers; each returns the output's spatial size. Square inputs unless stated. */
static long long out_size(long long h, long long k, long long st, long long pad) { return (h + 2 * pad - k) / st + 1; }

static long long conv(net_builder *b, long long c, long long h, long long k, long long r, long long st, long long pad,
                      long long groups) {
  add_task(b, 1, "conv2d_nchw", 11, 1LL, c, h, h, k, r, r, st, pad, 1LL, groups);
  return out_size(h, r, st, pad);
}

/* An r x s convolution with "same" padding (Inception's 1x7, 7x1, 1x3, 3x1): the library pads
 * both axes alike, so it runs unpadded on the input padded beforehand (same output, same FLOPs;
 * only the padding stage is absent). */
static void conv_rect(net_builder *b, long long c, long long h, long long k, long long r, long long s) {
  add_task(b, 1, "conv2d_nchw", 11, 1LL, c, h + r - 1, h + s - 1, k, r, s, 1LL, 0LL, 1LL, 1LL);
}

static long long dwconv(net_builder *b, long long c, long long h, long long r, long long st, long long pad) {
  add_task(b, 1, "depthwise_conv2d_nchw", 8, 1LL, c, h, h, r, r, st, pad);
  return out_size(h, r, st, pad);
}

static long long maxpool(net_builder *b, long long c, long long h, long long k, long long st, long long pad) {
  add_task(b, 1, "max_pool2d", 7, 1LL, c, h, h, k, st, pad);
  return out_size(h, k, st, pad);
}

static long long avgpool(net_builder *b, long long c, long long h, long long k, long long st, long long pad) {
  add_task(b, 1, "avg_pool2d", 7, 1LL, c, h, h, k, st, pad);
  return out_size(h, k, st, pad);
}

/* TOPI dense with bias; relu where the network applies one right after (GELU and tanh are not
 * library operators: the dense alone stands for those subgraphs). */
static void dense(net_builder *b, int w, long long n, long long k, long long m, long long relu) {
  add_task(b, w, "dense", 5, n, k, m, 1LL, relu);
}

/* ---------------------------------------------------------------- CNNs */

/* ResNet-18/34 (He et al., CVPR 2016, Table 1; torchvision's BasicBlock, stride on the first
 * 3x3): stem 7x7/2, max pool 3x3/2, four stages of basic blocks, global average pool, fc. */
static void resnet_basic(net_builder *b, const int *blocks) {
  long long h = conv(b, 3, 224, 64, 7, 2, 3, 1);
  h = maxpool(b, 64, h, 3, 2, 1);
  long long cin = 64;
  for (int s = 0; s < 4; s++) {
    long long c = 64LL << s;
    for (int i = 0; i < blocks[s]; i++) {
      long long st = (i == 0 && s > 0) ? 2 : 1;
      if (st != 1 || cin != c) conv(b, cin, h, c, 1, st, 0, 1); /* downsample */
      long long h2 = conv(b, cin, h, c, 3, st, 1, 1);
      conv(b, c, h2, c, 3, 1, 1, 1);
      h = h2, cin = c;
    }
  }
  avgpool(b, cin, h, h, 1, 0);
  dense(b, 1, 1, cin, 1000, 0);
}

static void resnet18(net_builder *b) { resnet_basic(b, (const int[]){2, 2, 2, 2}); }
static void resnet34(net_builder *b) { resnet_basic(b, (const int[]){3, 4, 6, 3}); }

/* ResNet-50 (He et al. 2016, Table 1) and ResNeXt-50 32x4d (Xie et al., CVPR 2017, Table 1):
 * bottlenecks 1x1 -> 3x3 (stride, groups) -> 1x1 (x4), as torchvision's Bottleneck (stride on
 * the 3x3, "ResNet v1.5"); a 1x1 downsample on each stage's first block. */
static void resnet_bottleneck(net_builder *b, long long groups, long long width_per_group) {
  static const int blocks[4] = {3, 4, 6, 3};
  long long h = conv(b, 3, 224, 64, 7, 2, 3, 1);
  h = maxpool(b, 64, h, 3, 2, 1);
  long long cin = 64;
  for (int s = 0; s < 4; s++) {
    long long planes = 64LL << s, width = planes * width_per_group / 64 * groups, cout = planes * 4;
    for (int i = 0; i < blocks[s]; i++) {
      long long st = (i == 0 && s > 0) ? 2 : 1;
      if (i == 0) conv(b, cin, h, cout, 1, st, 0, 1);
      conv(b, cin, h, width, 1, 1, 0, 1);
      long long h2 = conv(b, width, h, width, 3, st, 1, groups);
      conv(b, width, h2, cout, 1, 1, 0, 1);
      h = h2, cin = cout;
    }
  }
  avgpool(b, cin, h, h, 1, 0);
  dense(b, 1, 1, cin, 1000, 0);
}

static void resnet50(net_builder *b) { resnet_bottleneck(b, 1, 64); }
static void resnext50(net_builder *b) { resnet_bottleneck(b, 32, 4); }

/* VGG-16 (Simonyan & Zisserman, ICLR 2015, configuration D): 3x3 convolutions, 2x2 max pools,
 * three fully connected layers (ReLU after the first two). */
static void vgg16(net_builder *b) {
  static const int cfg[] = {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0};
  long long h = 224, c = 3;
  for (size_t i = 0; i < PT_ARRAY_LEN(cfg); i++) {
    if (!cfg[i]) h = maxpool(b, c, h, 2, 2, 0);
    else conv(b, c, h, cfg[i], 3, 1, 1, 1), c = cfg[i];
  }
  dense(b, 1, 1, 512 * 7 * 7, 4096, 1);
  dense(b, 1, 1, 4096, 4096, 1);
  dense(b, 1, 1, 4096, 1000, 0);
}

/* MobileNet-V1 (Howard et al. 2017, Table 1): 3x3/2 stem, 13 depthwise-separable pairs, average
 * pool, fc. The last depthwise runs at 7x7 with stride 1 (the table's "s2" there keeps 7x7). */
static void mobilenet_v1(net_builder *b) {
  static const struct { int cout, stride; } dw[13] = {{64, 1},  {128, 2}, {128, 1}, {256, 2}, {256, 1},
                                                     {512, 2}, {512, 1}, {512, 1}, {512, 1}, {512, 1},
                                                     {512, 1}, {1024, 2}, {1024, 1}};
  long long h = conv(b, 3, 224, 32, 3, 2, 1, 1), c = 32;
  for (int i = 0; i < 13; i++) {
    h = dwconv(b, c, h, 3, dw[i].stride, 1);
    conv(b, c, h, dw[i].cout, 1, 1, 0, 1);
    c = dw[i].cout;
  }
  avgpool(b, c, h, h, 1, 0);
  dense(b, 1, 1, c, 1000, 0);
}

/* MobileNet-V2 (Sandler et al., CVPR 2018, Table 2): inverted residuals (t, c, n, s): 1x1
 * expansion (absent when t = 1), 3x3 depthwise with the stride, 1x1 projection. */
static void mobilenet_v2(net_builder *b) {
  static const int cfg[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
                                {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  long long h = conv(b, 3, 224, 32, 3, 2, 1, 1), c = 32;
  for (int g = 0; g < 7; g++)
    for (int i = 0; i < cfg[g][2]; i++) {
      long long st = i == 0 ? cfg[g][3] : 1, hidden = c * cfg[g][0];
      if (cfg[g][0] != 1) conv(b, c, h, hidden, 1, 1, 0, 1);
      h = dwconv(b, hidden, h, 3, st, 1);
      conv(b, hidden, h, cfg[g][1], 1, 1, 0, 1);
      c = cfg[g][1];
    }
  conv(b, c, h, 1280, 1, 1, 0, 1);
  avgpool(b, 1280, h, h, 1, 0);
  dense(b, 1, 1, 1280, 1000, 0);
}

/* Inception-V3 (Szegedy et al., CVPR 2016; module shapes as torchvision's inception_v3, 299x299
 * input): stem, 3 x InceptionA (35x35), InceptionB, 4 x InceptionC (17x17, c7 = 128, 160, 160,
 * 192), InceptionD, 2 x InceptionE (8x8), average pool, fc. */
static void inception_v3(net_builder *b) {
  long long h = conv(b, 3, 299, 32, 3, 2, 0, 1);
  h = conv(b, 32, h, 32, 3, 1, 0, 1);
  h = conv(b, 32, h, 64, 3, 1, 1, 1);
  h = maxpool(b, 64, h, 3, 2, 0);
  h = conv(b, 64, h, 80, 1, 1, 0, 1);
  h = conv(b, 80, h, 192, 3, 1, 0, 1);
  h = maxpool(b, 192, h, 3, 2, 0); /* 35 */
  static const int a_in[3] = {192, 256, 288}, a_pool[3] = {32, 64, 64};
  for (int i = 0; i < 3; i++) { /* InceptionA */
    long long c = a_in[i];
    conv(b, c, h, 64, 1, 1, 0, 1);
    conv(b, c, h, 48, 1, 1, 0, 1);
    conv(b, 48, h, 64, 5, 1, 2, 1);
    conv(b, c, h, 64, 1, 1, 0, 1);
    conv(b, 64, h, 96, 3, 1, 1, 1);
    conv(b, 96, h, 96, 3, 1, 1, 1);
    avgpool(b, c, h, 3, 1, 1);
    conv(b, c, h, a_pool[i], 1, 1, 0, 1);
  }
  /* InceptionB: 288 -> 768 at 17x17 */
  conv(b, 288, h, 384, 3, 2, 0, 1);
  conv(b, 288, h, 64, 1, 1, 0, 1);
  conv(b, 64, h, 96, 3, 1, 1, 1);
  conv(b, 96, h, 96, 3, 2, 0, 1);
  h = maxpool(b, 288, h, 3, 2, 0); /* 17 */
  static const int c7s[4] = {128, 160, 160, 192};
  for (int i = 0; i < 4; i++) { /* InceptionC */
    long long c7 = c7s[i];
    conv(b, 768, h, 192, 1, 1, 0, 1);
    conv(b, 768, h, c7, 1, 1, 0, 1);
    conv_rect(b, c7, h, c7, 1, 7);
    conv_rect(b, c7, h, 192, 7, 1);
    conv(b, 768, h, c7, 1, 1, 0, 1);
    conv_rect(b, c7, h, c7, 7, 1);
    conv_rect(b, c7, h, c7, 1, 7);
    conv_rect(b, c7, h, c7, 7, 1);
    conv_rect(b, c7, h, 192, 1, 7);
    avgpool(b, 768, h, 3, 1, 1);
    conv(b, 768, h, 192, 1, 1, 0, 1);
  }
  /* InceptionD: 768 -> 1280 at 8x8 */
  conv(b, 768, h, 192, 1, 1, 0, 1);
  conv(b, 192, h, 320, 3, 2, 0, 1);
  conv(b, 768, h, 192, 1, 1, 0, 1);
  conv_rect(b, 192, h, 192, 1, 7);
  conv_rect(b, 192, h, 192, 7, 1);
  conv(b, 192, h, 192, 3, 2, 0, 1);
  h = maxpool(b, 768, h, 3, 2, 0); /* 8 */
  static const int e_in[2] = {1280, 2048};
  for (int i = 0; i < 2; i++) { /* InceptionE */
    long long c = e_in[i];
    conv(b, c, h, 320, 1, 1, 0, 1);
    conv(b, c, h, 384, 1, 1, 0, 1);
    conv_rect(b, 384, h, 384, 1, 3);
    conv_rect(b, 384, h, 384, 3, 1);
    conv(b, c, h, 448, 1, 1, 0, 1);
    conv(b, 448, h, 384, 3, 1, 1, 1);
    conv_rect(b, 384, h, 384, 1, 3);
    conv_rect(b, 384, h, 384, 3, 1);
    avgpool(b, c, h, 3, 1, 1);
    conv(b, c, h, 192, 1, 1, 0, 1);
  }
  avgpool(b, 2048, h, h, 1, 0);
  dense(b, 1, 1, 2048, 1000, 0);
}

/* DenseNet-121 (Huang et al., CVPR 2017, Table 1; growth 32, bottleneck 4 x 32, compression
 * 0.5): stem 7x7/2 and max pool, dense blocks of 6, 12, 24, 16 layers (1x1 to 128, 3x3 to 32)
 * with transitions (1x1 halving the channels, 2x2 average pool), global pool, fc. */
static void densenet121(net_builder *b) {
  static const int layers[4] = {6, 12, 24, 16};
  long long h = conv(b, 3, 224, 64, 7, 2, 3, 1);
  h = maxpool(b, 64, h, 3, 2, 1);
  long long c = 64;
  for (int s = 0; s < 4; s++) {
    for (int i = 0; i < layers[s]; i++) {
      conv(b, c, h, 128, 1, 1, 0, 1);
      conv(b, 128, h, 32, 3, 1, 1, 1);
      c += 32;
    }
    if (s < 3) {
      conv(b, c, h, c / 2, 1, 1, 0, 1);
      c /= 2;
      h = avgpool(b, c, h, 2, 2, 0);
    }
  }
  avgpool(b, c, h, h, 1, 0);
  dense(b, 1, 1, c, 1000, 0);
}

/* ---------------------------------------------------------------- transformers */

/* One encoder/decoder stack: per layer the Q/K/V projections (fused into one when `fused_qkv`, as
 * GPT-2's c_attn and timm's ViT qkv), the attention scores Q K^T per head, softmax, scores x V,
 * the output projection and the two feed-forward denses (GELU is not a library operator). */
static void transformer(net_builder *b, int n_layers, long long seq, long long hidden, long long heads, long long ff,
                        bool fused_qkv) {
  long long hd = hidden / heads;
  if (fused_qkv) dense(b, n_layers, seq, hidden, 3 * hidden, 0);
  dense(b, n_layers * (fused_qkv ? 1 : 4), seq, hidden, hidden, 0);
  add_task(b, n_layers, "batch_matmul", 4, heads, seq, hd, seq);
  add_task(b, n_layers, "softmax", 2, heads * seq, seq);
  add_task(b, n_layers, "batch_matmul", 4, heads, seq, seq, hd);
  dense(b, n_layers, seq, hidden, ff, 0);
  dense(b, n_layers, seq, ff, hidden, 0);
}

/* BERT (Devlin et al., NAACL 2019) at sequence length 128, with the pooler's dense. Base: L=12,
 * H=768, A=12; the small BERTs of Turc et al. 2019 ("Well-Read Students Learn Better"): tiny
 * L=2 H=128 A=2, mini L=4 H=256 A=4, small L=4 H=512 A=8, medium L=8 H=512 A=8; FF = 4H. */
static void bert(net_builder *b, int layers, long long hidden, long long heads) {
  transformer(b, layers, 128, hidden, heads, 4 * hidden, false);
  dense(b, 1, 1, hidden, hidden, 0);
}

static void bert_base(net_builder *b) { bert(b, 12, 768, 12); }
static void bert_tiny(net_builder *b) { bert(b, 2, 128, 2); }
static void bert_mini(net_builder *b) { bert(b, 4, 256, 4); }
static void bert_small(net_builder *b) { bert(b, 4, 512, 8); }
static void bert_medium(net_builder *b) { bert(b, 8, 512, 8); }

/* ViT-B/16 (Dosovitskiy et al., ICLR 2021, Table 1): 16x16/16 patch embedding of a 224x224
 * image (196 patches + the class token = 197), 12 layers, H=768, A=12, MLP 3072, class head. */
static void vit_b16(net_builder *b) {
  conv(b, 3, 224, 768, 16, 16, 0, 1);
  transformer(b, 12, 197, 768, 12, 3072, true);
  dense(b, 1, 1, 768, 1000, 0);
}

/* GPT-2 small's layers (Radford et al. 2019: 12 layers, H=768, A=12, FF 3072) on 256 tokens;
 * the vocabulary projection is left out ("layers"). */
static void gpt2(net_builder *b) { transformer(b, 12, 256, 768, 12, 3072, true); }

/* ---------------------------------------------------------------- the table */

typedef struct {
  const char *name;
  bool test;
  const char *source;
  void (*build)(net_builder *b);
} network_def;

/* Test networks (never in training) are TLP's (Zhai et al., ASPLOS 2023, section 6.1). */
static const network_def networks[] = {
    {"resnet50", true, "He et al. 2016, Table 1 (torchvision v1.5)", resnet50},
    {"mobilenet_v2", true, "Sandler et al. 2018, Table 2", mobilenet_v2},
    {"resnext50", true, "Xie et al. 2017, Table 1 (32x4d)", resnext50},
    {"bert_tiny", true, "Turc et al. 2019 (L=2, H=128, A=2), seq 128", bert_tiny},
    {"bert_base", true, "Devlin et al. 2019 (L=12, H=768, A=12), seq 128", bert_base},
    {"resnet18", false, "He et al. 2016, Table 1", resnet18},
    {"resnet34", false, "He et al. 2016, Table 1", resnet34},
    {"vgg16", false, "Simonyan & Zisserman 2015, configuration D", vgg16},
    {"mobilenet_v1", false, "Howard et al. 2017, Table 1", mobilenet_v1},
    {"inception_v3", false, "Szegedy et al. 2016 (torchvision), 299x299", inception_v3},
    {"densenet121", false, "Huang et al. 2017, Table 1", densenet121},
    {"vit_b16", false, "Dosovitskiy et al. 2021, Table 1, 224x224", vit_b16},
    {"gpt2", false, "Radford et al. 2019 (12 layers, H=768), 256 tokens", gpt2},
    {"bert_mini", false, "Turc et al. 2019 (L=4, H=256, A=4), seq 128", bert_mini},
    {"bert_small", false, "Turc et al. 2019 (L=4, H=512, A=8), seq 128", bert_small},
    {"bert_medium", false, "Turc et al. 2019 (L=8, H=512, A=8), seq 128", bert_medium},
};

int pc_network_count(void) { return (int)PT_ARRAY_LEN(networks); }
const char *pc_network_name(int i) { return i >= 0 && i < pc_network_count() ? networks[i].name : NULL; }

pc_network *pc_network_build(const char *name, pt_diag *d) {
  for (int i = 0; i < pc_network_count(); i++) {
    if (strcmp(networks[i].name, name) != 0) continue;
    pc_network *net = calloc(1, sizeof *net);
    snprintf(net->name, sizeof net->name, "%s", name);
    net->test = networks[i].test;
    net->source = networks[i].source;
    net_builder b = {net, d, 0};
    networks[i].build(&b);
    if (b.err) {
      pc_network_free(net);
      return NULL;
    }
    return net;
  }
  pt_fail(d, PT_ERR_INPUT, "network '%s': unknown (portent networks lists them)", name);
  return NULL;
}

double pc_network_flops(const pc_network *net) {
  double f = 0;
  for (int i = 0; i < net->n_tasks; i++) f += net->tasks[i].weight * net->tasks[i].flops;
  return f;
}

void pc_network_free(pc_network *net) {
  if (!net) return;
  free(net->tasks);
  free(net);
}

/* The union of the named networks' tasks: `list` is comma-separated names, or "test",
 * "training", "all". A task in several networks appears once, its weight summed over them. */
int pc_networks_tasks(const char *list, pc_network_task **out, pt_diag *d) {
  *out = NULL;
  int n = 0, cap = 0, rc = 0;
  char *copy = strdup(list), *save = NULL;
  for (char *name = strtok_r(copy, ",", &save); name && rc == 0; name = strtok_r(NULL, ",", &save)) {
    while (*name == ' ') name++;
    bool group = strcmp(name, "test") == 0 || strcmp(name, "training") == 0 || strcmp(name, "all") == 0;
    int found = 0;
    for (int i = 0; i < pc_network_count() && rc == 0; i++) {
      bool take = group ? (strcmp(name, "all") == 0 || networks[i].test == (strcmp(name, "test") == 0))
                        : strcmp(name, networks[i].name) == 0;
      if (!take) continue;
      found++;
      pc_network *net = pc_network_build(networks[i].name, d);
      if (!net) {
        rc = -1;
        break;
      }
      for (int t = 0; t < net->n_tasks; t++) {
        int j = 0;
        while (j < n && strcmp((*out)[j].key, net->tasks[t].key) != 0) j++;
        if (j < n) {
          (*out)[j].weight += net->tasks[t].weight;
          continue;
        }
        if (n == cap) *out = realloc(*out, sizeof **out * (size_t)(cap = cap ? 2 * cap : 64));
        (*out)[n++] = net->tasks[t];
      }
      pc_network_free(net);
    }
    if (!found && rc == 0) rc = pt_fail(d, PT_ERR_INPUT, "network '%s': unknown (portent networks lists them)", name);
  }
  free(copy);
  if (rc < 0) {
    free(*out);
    *out = NULL;
    return rc;
  }
  return n;
}
