"""`torch.nn.modules.rnn`'s path: the recurrent layers; PyTorch code imports them from there, and
here they come from the modules of nn/ named below."""
from ..recurrent import RNNBase, RNNCellBase
from ..rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNCell

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]
