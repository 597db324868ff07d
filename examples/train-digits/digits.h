#pragma once
// The handwritten-digits fixture (tests/data/digits) and the two classifiers
// trained on it through ggml-opt on the CPU backend. Shared by the
// train-digits example and test_training's end-to-end test, so that both
// train exactly the same models.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace digits {

constexpr int kPixels = 64; // 8x8, row major
constexpr int kClasses = 10;
constexpr int64_t kImages = 1797;

struct Data {
    std::vector<float> x;   // kPixels values per image, pixel / 16 (in [0, 1])
    std::vector<int32_t> y; // the digit

    int64_t size() const { return (int64_t) y.size(); }
};

// Reads digits.u8 (65-byte records: 64 pixels 0..16, then the label 0..9).
// Returns "" on success, otherwise one line saying what is wrong.
std::string load(const std::string & path, Data & out);

// The fixed 80/20 split: the 5th, 10th, 15th, ... image of each digit (in
// file order) is held out and never trained on; the rest is for training.
void split(const Data & all, Data & train, Data & heldout);

enum class Arch {
    MLP, // 64 -> dense 128 + bias -> relu -> dense 10 + bias
    CNN, // 8x8x1 -> conv 3x3 (pad 1) 16 channels + bias -> relu -> max pool 2x2 -> dense 256 -> 10 + bias
};

struct Options {
    Arch arch = Arch::MLP;
    int epochs = 15;
    int batch = 32;        // datapoints per optimizer step
    float lr = 3e-3f;      // AdamW alpha (other AdamW values: ggml-opt's defaults)
    int threads = 1;       // the layers are small: more threads mostly wait at barriers
    uint32_t seed = 1;     // initial weights
    bool progress = false; // ggml-opt's progress bar on stderr
};

// The settings the example and the test use: both models reach about 97 %
// held-out accuracy (MLP 15 epochs, CNN 10, AdamW alpha 3e-3, batch 32).
Options default_options(Arch arch);

struct EpochStats {
    int epoch = 0;                                     // from 1
    double train_loss = 0.0, train_accuracy = 0.0;     // over the epoch's training batches
    double heldout_loss = 0.0, heldout_accuracy = 0.0; // after the epoch, on the held-out images
};

// Trains on `train` (cross-entropy, AdamW, reshuffled every epoch) and after
// each epoch evaluates the whole held-out set in one batch; on_epoch (may be
// empty) sees each epoch's numbers. The accuracies are ggml-opt's (lmggml's
// argmax of the logits against the labels). heldout_pred, when given,
// receives the last evaluation's predicted digits. Returns "" or one line.
std::string train(const Options & opt, const Data & train, const Data & heldout,
                  const std::function<void(const EpochStats &)> & on_epoch,
                  std::vector<int32_t> * heldout_pred = nullptr);

} // namespace digits
