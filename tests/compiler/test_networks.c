/* The TenSet-style networks (compiler/networks.c) against facts of the published architectures:
 * ResNet-50's 53 convolutions and ~4.1 GMACs, BERT-base's 12 identical layers, MobileNet-V2's
 * 17 depthwise layers, ResNeXt-50's grouped convolutions; tasks deduplicated within a network;
 * the union over networks; unknown names fail with a message. */
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"
#include "test.h"

/* Sum of the weights of tasks whose spec starts with `prefix` (and contains `part` if given). */
static int weight_of(const pc_network *n, const char *prefix, const char *part) {
  int w = 0;
  for (int i = 0; i < n->n_tasks; i++)
    if (strncmp(n->tasks[i].spec, prefix, strlen(prefix)) == 0 && (!part || strstr(n->tasks[i].spec, part)))
      w += n->tasks[i].weight;
  return w;
}

static pc_network *build(const char *name) {
  pt_diag d = {0};
  pc_network *n = pc_network_build(name, &d);
  CHECK_MSG(n != NULL, "%s: %s", name, d.msg);
  return n;
}

int main(void) {
  int n_test = 0;
  for (int i = 0; i < pc_network_count(); i++) {
    pc_network *n = build(pc_network_name(i));
    if (!n) continue;
    n_test += n->test;
    CHECK_MSG(n->n_tasks > 0 && pc_network_flops(n) > 0, "%s: empty", n->name);
    for (int a = 0; a < n->n_tasks; a++) {
      CHECK_MSG(n->tasks[a].weight >= 1 && n->tasks[a].flops > 0, "%s: task %s", n->name, n->tasks[a].spec);
      for (int b = a + 1; b < n->n_tasks; b++)
        CHECK_MSG(strcmp(n->tasks[a].key, n->tasks[b].key) != 0, "%s: task %s twice", n->name, n->tasks[a].key);
    }
    pc_network_free(n);
  }
  CHECK_MSG(n_test == 5, "%d test networks, TLP holds out 5", n_test);

  /* ResNet-50: 1 stem + 16 bottlenecks x 3 + 4 downsamples = 53 convolutions; 4.1 GMACs. */
  pc_network *r50 = build("resnet50");
  CHECK_MSG(weight_of(r50, "conv2d_nchw:", NULL) == 53, "resnet50: %d convs", weight_of(r50, "conv2d_nchw:", NULL));
  CHECK(weight_of(r50, "dense:1,2048,1000", NULL) == 1 && weight_of(r50, "max_pool2d:", NULL) == 1);
  double gmac = pc_network_flops(r50) / 2e9;
  CHECK_MSG(gmac > 4.0 && gmac < 4.2, "resnet50: %.3f GMACs, published 4.1", gmac);
  pc_network_free(r50);

  /* ResNeXt-50 32x4d: the 16 3x3 convolutions are grouped by 32. */
  pc_network *rx = build("resnext50");
  CHECK(weight_of(rx, "conv2d_nchw:", ",1,32") == 16 && weight_of(rx, "conv2d_nchw:", NULL) == 53);
  pc_network_free(rx);

  /* MobileNet-V2: 17 inverted residuals (one without expansion) -> 17 depthwise, 52 convs in all. */
  pc_network *mb = build("mobilenet_v2");
  CHECK(weight_of(mb, "depthwise_conv2d_nchw:", NULL) == 17);
  CHECK(weight_of(mb, "conv2d_nchw:", NULL) + weight_of(mb, "depthwise_conv2d_nchw:", NULL) == 52);
  pc_network_free(mb);

  /* BERT-base: 12 layers of the same matmuls: Q, K, V, output (4 x 12), FFN (12 + 12), two
   * batch matmuls and a softmax per layer, plus the pooler. */
  pc_network *bb = build("bert_base");
  CHECK(weight_of(bb, "dense:128,768,768,", NULL) == 48);
  CHECK(weight_of(bb, "dense:128,768,3072,", NULL) == 12 && weight_of(bb, "dense:128,3072,768,", NULL) == 12);
  CHECK(weight_of(bb, "batch_matmul:12,128,64,128", NULL) == 12 && weight_of(bb, "batch_matmul:12,128,128,64", NULL) == 12);
  CHECK(weight_of(bb, "softmax:1536,128", NULL) == 12 && weight_of(bb, "dense:1,768,768,", NULL) == 1);
  CHECK_MSG(bb->n_tasks == 7, "bert_base: %d tasks", bb->n_tasks);
  pc_network_free(bb);

  /* DenseNet-121: 58 dense layers x 2 + 3 transitions + the stem = 120 convolutions (+ fc = 121). */
  pc_network *dn = build("densenet121");
  CHECK(weight_of(dn, "conv2d_nchw:", NULL) == 120 && weight_of(dn, "dense:", NULL) == 1);
  pc_network_free(dn);
  pc_network *vgg = build("vgg16"); /* 13 convolutions + 3 fully connected = 16 */
  CHECK(weight_of(vgg, "conv2d_nchw:", NULL) == 13 && weight_of(vgg, "dense:", NULL) == 3);
  pc_network_free(vgg);
  pc_network *inc = build("inception_v3"); /* torchvision's 94 BasicConv2d (without the aux head) */
  CHECK_MSG(weight_of(inc, "conv2d_nchw:", NULL) == 94, "inception_v3: %d convs", weight_of(inc, "conv2d_nchw:", NULL));
  pc_network_free(inc);

  /* Union: a task shared by ResNet-50 and ResNeXt-50 (the stem) appears once, weights summed. */
  pt_diag d = {0};
  pc_network_task *t;
  int n = pc_networks_tasks("resnet50,resnext50", &t, &d);
  CHECK(n > 0 && n < 26 + 27);
  int stem = 0;
  for (int i = 0; i < n; i++)
    if (strcmp(t[i].spec, "conv2d_nchw:1,3,224,224,64,7,7,2,3,1,1") == 0) stem += t[i].weight;
  CHECK_MSG(stem == 2, "shared stem weight %d", stem);
  free(t);
  int n_all = pc_networks_tasks("all", &t, &d), n_tr = 0, n_te = 0;
  free(t);
  n_te = pc_networks_tasks("test", &t, &d);
  free(t);
  n_tr = pc_networks_tasks("training", &t, &d);
  free(t);
  CHECK(n_all > 0 && n_te > 0 && n_tr > 0 && n_all <= n_te + n_tr && n_all >= n_tr);
  CHECK(pc_networks_tasks("resnet50,nope", &t, &d) < 0 && strstr(d.msg, "nope"));
  CHECK(pc_network_build("alexnet", &d) == NULL && strstr(d.msg, "alexnet"));
  TEST_DONE();
}
