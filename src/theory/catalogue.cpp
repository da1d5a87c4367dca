#include <attnlab/theory/catalogue.hpp>

namespace attnlab {

const std::vector<LeftOutClaim>& left_out_claims() {
  static const std::vector<LeftOutClaim> claims{
      {"POLY Table 2, 5", "ImageNet-1k top-1 of ViT, DeiT and Swin with softmax and x^p activations",
       "ImageNet-1k pretraining: the data set is not a Debian package and the compute is beyond a 2-core machine"},
      {"POLY Table 3", "COCO detection and instance segmentation with polynomial-activation backbones",
       "COCO and ImageNet-pretrained backbones are not available here"},
      {"POLY Table 4", "Nystromformer with x^p activations on the LRA benchmark", "LRA data are not a Debian package"},
      {"POLY Table 6-8", "GPT-2 perplexity on WikiText-103, PTB and PG-19 with polynomial activations",
       "language-model pretraining on these corpora is out of reach here"},
      {"RELU Fig 1, 3, Tables", "ReLU attention matches softmax on ImageNet-1k and ImageNet-21k at ViT scales",
       "ImageNet training; the match, the alpha dependence, the choice of h and qk-layernorm's effect are judged on "
       "Fashion-MNIST instead (relu.matches_softmax, relu.alpha_sweep, relu.no_best_h, relu.qk_layernorm)"},
      {"SOFT Tables 1-7", "ImageNet-1k accuracy, FLOPs and memory of SOFT models; COCO and ADE20K downstream tasks",
       "ImageNet, COCO and ADE20K training; the complexity claim is judged on the attention itself (soft.complexity), "
       "Table 6's collapse of SOFT at long sequences on the spectral norms Sec 3.3 blames (soft.table6_long_n)"},
      {"SOFT Tables 8-10",
       "symmetric against asymmetric kernels, bottleneck length m and sampling method: top-1, memory, "
       "FLOPs and parameters of whole SOFT models",
       "every column needs ImageNet training or the full SOFT architecture (stages, widths, convolutions), which the "
       "toolkit does not build; the samplers' reconstruction error is judged instead (soft.nystrom_error, its ranking "
       "in soft.nystrom_error.table10_ranking, random sampling's sensitivity to m in "
       "soft.nystrom_error.random_sensitive; the learned convolution sampler is not implemented)"},
      {"PERIODIC §3.3", "the phase pi/4 makes Sin2max-shifted's gradient stable",
       "the paper names no measure of 'stable' that singles out pi/4: near x = 0, sin^2(x + phi) gives n|ds/dx| ~ 2 cot phi, "
       "closest to softmax's ~1 at phi = arctan 2, not pi/4, and largest as phi -> 0; a phase sweep would judge a criterion "
       "of our own making"},
  };
  return claims;
}

}  // namespace attnlab
