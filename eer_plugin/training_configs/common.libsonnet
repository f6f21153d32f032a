// Shared settings of every experiment. Each training_configs/<approach>_<variant>.jsonnet calls
// `experiment(...)` with what differs. The table in eer_plugin/runtime/settings.py is the single source of the
// settings (`eer-ner eer-settings` lists them; tests/runtime/test_settings.py checks this file against it):
// * environment settings, read with std.extVar (allennlp passes the environment to jsonnet; the plugin gives
//   jsonnet the default of every one not set; a test checks that this header names each):
//   EER_TRAIN_DATA     training data (partial .jsonl, CoNLL or OntoNotes); required, no default
//   EER_DEV_DATA       validation data; empty (default): no validation, the last epoch's model is kept
//   EER_TEST_DATA      test data evaluated after training; empty (default): no test evaluation
//   EER_GOLD_TRAIN_DATA  fully annotated training data (gold, gold_sns); required there
//   EER_TAG_SCHEME, EER_FILE_ENCODING, EER_SENTENCES_PER_DOCUMENT, EER_TAG_COLUMN  how the data files are read
//                      (auto, auto, empty = 10, -1: eer-simulate's --tag-scheme, --file-encoding, ...)
//   EER_ENCODER        Hugging Face name or local dir; all-MiniLM-L6-v2 = the packaged offline copy
//   EER_MAX_LENGTH     subwords per chunk, bookends included (the encoder's input length)
//   EER_PRECISION      auto | fp32 | bf16: the encoder's precision on this machine (the CRF and the losses stay
//                      float32); auto (default): bf16 on CPUs with AMX / AVX-512 BF16 and bf16-capable GPUs, else fp32
//   EER_SEED, EER_CUDA_DEVICE  seeds; GPU index (-1: CPU)
//   EER_CHECKPOINT_SECONDS  also checkpoint inside an epoch, at most this many seconds apart; empty: at epochs' ends
//   EER_WORD_VECTORS, EER_WORD_DIM  CBL-LSTM's word vectors file and its size
// * hyperparameters: the literals below (rho, gamma, lambda_u, the ratio control and start, the ablation flags,
//   epochs, batch size, learning rates, min_steps, validation metric, CBL's round epochs), each at the config key
//   the table names, changed for one run with -o, e.g. -o '{"model.ratio_loss_weight": 100, "trainer.num_epochs": 12}'
local env(name) = std.extVar(name);
// a data path that must be given, and one that may be empty (null: no such data)
local required(name) =
  if env(name) != '' then env(name)
  else error name + ' is not set: name your training data, e.g. ' + name +
             '=train.jsonl eer-ner train eer_short.jsonnet -s model (eer-ner eer-settings lists every setting)';
local optional(name) = if env(name) != '' then env(name) else null;
local encoder = env('EER_ENCODER');
local max_length = std.parseInt(env('EER_MAX_LENGTH'));
local seed = std.parseInt(env('EER_SEED'));
local head_lr = 1e-3;  // every freshly initialised part, in every approach (CBL-LSTM: all of it)
local precision = env('EER_PRECISION');

local reader(variant, assume_complete, sentence_level=false, words=false) = {
  type: 'eer_documents',
  model_name: if words then 'words' else encoder,
  variant: variant,
  assume_complete: assume_complete,
  max_length: max_length,
  sentence_level: sentence_level,
  [if words then 'token_indexers']: { tokens: { type: 'single_id', lowercase_tokens: true } },
  tag_scheme: env('EER_TAG_SCHEME'),
  file_encoding: env('EER_FILE_ENCODING'),
  tag_column: std.parseInt(env('EER_TAG_COLUMN')),
  [if env('EER_SENTENCES_PER_DOCUMENT') != '' then 'sentences_per_document']: std.parseInt(env('EER_SENTENCES_PER_DOCUMENT')),
};

local embedder = { token_embedders: { tokens: { type: 'eer_transformer', model_name: encoder } } };

// What each model learns at the head learning rate: everything that is not the pretrained encoder.
local head_parameters = {
  crf: ['^tag_scorer\\.', '^crf\\.'],
  sns: ['^classifier\\.'],
};

// The CRF tagger of every tagging approach; ratio_loss_weight 0 = plain (partial) likelihood. The EER literals are
// eer_tagger's own defaults (rho .. c: eer_plugin/core/ranges.py), copied, as jsonnet reads no Python; a test checks them.
local tagger(partial) = {
  type: 'eer_tagger',
  text_field_embedder: embedder,
  dropout: 0.2,
  entity_ratio: 0.15,  // rho
  ratio_margin: 0.05,  // gamma
  ratio_loss_weight: if partial then 10 else 0,  // lambda_u
  // ratio_control bind holds rho_hat in the band (augmented Lagrangian, eer_plugin/core/ratio_control.py);
  // its step eta and slope c are overridden with -o '{"model.price_rate": ..., "model.price_penalty": ...}'
  ratio_control: 'fixed',
  [if partial then 'price_rate']: 1.0,
  [if partial then 'price_penalty']: 10.0,
  // ablations toward the authors' training: the per-sequence hinge, bookends counted in rho_hat, no grammar in the loss
  per_sequence_ratio: false,
  ratio_counts_bookends: false,
  train_constraints: true,
  precision: precision,
};

// CBL-LSTM's tagger: a BiLSTM over trainable word embeddings (optionally initialised from
// EER_WORD_VECTORS, a GloVe/fastText text file), as in Mayhew et al.'s BiLSTM-CRF.
local lstm_tagger = {
  type: 'eer_tagger',
  text_field_embedder: { token_embedders: { tokens: {
    type: 'embedding',
    embedding_dim: std.parseInt(env('EER_WORD_DIM')),
    trainable: true,
    [if env('EER_WORD_VECTORS') != '' then 'pretrained_file']: env('EER_WORD_VECTORS'),
  } } },
  encoder: { type: 'lstm', input_size: std.parseInt(env('EER_WORD_DIM')), hidden_size: 100, bidirectional: true },
  dropout: 0.5,
  ratio_loss_weight: 0,
};

// Li et al. (2021) span model with negative sampling, on sentences.
local sns = {
  type: 'sns_tagger',
  text_field_embedder: embedder,
  max_width: 10,
  negative_rate: 0.35,
  seed: seed,
  precision: precision,
  entity_ratio: 0.15,  // rho, for the partial-dev metric only
};

{
  // approach: 'eer' | 'raw' | 'gold' | 'sns' | 'gold_sns' | 'cbl' | 'cbl_lstm';  variant: 'all' | 'short' | 'shortest'
  // ('cbl*' configs are run with `allennlp cbl`, which reads and removes the `cbl` block)
  experiment(approach, variant)::
    local partial = approach == 'eer';
    local sentences = approach == 'sns' || approach == 'gold_sns';  // the span model, on sentences
    local lstm = approach == 'cbl_lstm';
    local weighted = approach == 'cbl' || lstm;  // unannotated words: O with a CBL weight (soft evidence)
    // the paper: 20 epochs (all), 50 (short, shortest); CBL-LSTM uses Mayhew et al.'s 45
    local epochs = if lstm then 45 else if variant == 'all' then 20 else 50;
    {
    random_seed: seed,
    numpy_seed: seed,
    pytorch_seed: seed,
    dataset_reader: reader(variant, !(partial || weighted), sentences, lstm),
    // evaluation data: gold files (CoNLL, OntoNotes) are complete; a partial .jsonl stays partial and is scored
    // by the partial-* metrics (select with -o '{"trainer.validation_metric": "+partial-f1"}')
    validation_dataset_reader: reader('all', false, sentences, lstm),
    train_data_path: required(if std.member(['gold', 'gold_sns'], approach) then 'EER_GOLD_TRAIN_DATA' else 'EER_TRAIN_DATA'),
    // no dev set: no validation (the trainer says so); test data only when named. An unset path leaves its key
    // out (not null): AllenNLP's distributed training reads every *_data_path key present, null included
    [if optional('EER_DEV_DATA') != null then 'validation_data_path']: optional('EER_DEV_DATA'),
    [if optional('EER_TEST_DATA') != null then 'test_data_path']: optional('EER_TEST_DATA'),
    evaluate_on_test: env('EER_TEST_DATA') != '',
    model: if sentences then sns else if lstm then lstm_tagger else tagger(partial),
    data_loader: {
      batch_sampler: { type: 'bucket', batch_size: 4, sorting_keys: ['tokens'] },
    },
    trainer: {
      type: 'eer',  // gradient_descent + min_steps (eer_plugin/training/trainer.py)
      num_epochs: epochs,
      min_steps: 0,  // least optimizer steps (0: the epochs decide); small data get longer epochs
      deterministic: false,  // true: deterministic kernels, a GPU run repeats exactly (slower there)
      dropout_seed: null,  // a number: torch reseeded once the model is built (other dropout, same weights and batches)
      patience: null,  // never stop early (-o trainer.num_epochs alone changes the run's length)
      validation_metric: '+f1-measure-overall',
      cuda_device: std.parseInt(env('EER_CUDA_DEVICE')),
      grad_norm: 5.0,
      optimizer: {
        type: 'adamw',
        // the pretrained encoder at 2e-5; every freshly initialised part at the head rate (parameter group 0)
        // (CBL-LSTM has no pretrained part: Mayhew et al.'s 1e-3 is the default head rate)
        lr: if lstm then head_lr else 2e-5,
        weight_decay: 0.0,
        parameter_groups: if lstm then [] else [[head_parameters[if sentences then 'sns' else 'crf'], { lr: head_lr }]],
      },
      learning_rate_scheduler: { type: 'slanted_triangular', cut_frac: 0.1, ratio: 16 },
      // atomic files + RNG states (eer_plugin/training/checkpointer.py); EER_CHECKPOINT_SECONDS: also inside epochs
      checkpointer: {
        type: 'eer_atomic',
        keep_most_recent_by_count: 1,
        [if optional('EER_CHECKPOINT_SECONDS') != null then 'save_every_num_seconds']: std.parseJson(env('EER_CHECKPOINT_SECONDS')),
      },
      // the ratio-calibrated start of the EER taggers (EER_RATIO_INIT: -o '{"trainer.callbacks": []}' turns it off)
      callbacks: if partial then [{ type: 'eer_ratio_init' }] else [],
    },
  } + (if weighted then {
    cbl: {
      entity_ratio: 0.2,  // the paper used rho = 0.2 for CBL (Mayhew et al.'s gold ratio + 0.05)
      step: 0.02,
      clip: 0.5,
      round_epochs: 5,
    },
  } else {}),
}
