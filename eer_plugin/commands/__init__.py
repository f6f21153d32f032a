"""AllenNLP subcommands of eer-ner."""
