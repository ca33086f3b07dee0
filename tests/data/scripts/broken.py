from trl import GRPOTrainer
def broken(:
    pass
