#!/usr/bin/env python3
"""Write a byte-level tokenizer (256 tokens, one per byte, no merges) to DIR,
for benchmark clients that need a Hugging Face tokenizer to build synthetic
prompts (AIPerf: --tokenizer DIR) where the Hub cannot be reached. A prompt
of N of its tokens is N bytes: servesim serve counts N / 4 tokens.

  python byte_tokenizer.py DIR   (needs the tokenizers and transformers packages)
"""
import sys

from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

if len(sys.argv) != 2:
    sys.exit(__doc__)
alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
tok = Tokenizer(models.BPE(vocab={c: i for i, c in enumerate(alphabet)}, merges=[]))
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tok.decoder = decoders.ByteLevel()
PreTrainedTokenizerFast(tokenizer_object=tok).save_pretrained(sys.argv[1])
