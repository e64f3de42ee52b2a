"""Deep Q-learning on a generated grid world (a 5x5 grid, a goal and a pit), as users write it:
a replay buffer of tensors, epsilon-greedy actions drawn with torch.rand and torch.randint,
the Q-value of the taken action by gather, a target network copied with load_state_dict (and
a deepcopy for the evaluation snapshot), Double-DQN targets, smooth_l1_loss, clip_grad_value_,
and a greedy policy read off at the end."""
# same-source tolerance: 3e-4 1e-5
# same-source exact: ^(eps|actions)
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(4)
SIZE, GOAL, PIT = 5, (4, 4), (2, 2)
MOVES = torch.tensor([[-1, 0], [1, 0], [0, -1], [0, 1]])


def observe(pos):
    board = torch.zeros(SIZE, SIZE)
    board[pos[0], pos[1]] = 1.0
    return board.flatten()


def env_step(pos, action):
    new = (pos + MOVES[action]).clamp(0, SIZE - 1)
    if tuple(new.tolist()) == GOAL:
        return new, 1.0, True
    if tuple(new.tolist()) == PIT:
        return new, -1.0, True
    return new, -0.04, False


class ReplayBuffer:
    def __init__(self, capacity):
        self.states = torch.zeros(capacity, SIZE * SIZE)
        self.actions = torch.zeros(capacity, dtype=torch.long)
        self.rewards = torch.zeros(capacity)
        self.next_states = torch.zeros(capacity, SIZE * SIZE)
        self.dones = torch.zeros(capacity, dtype=torch.bool)
        self.capacity, self.size, self.at = capacity, 0, 0

    def push(self, s, a, r, s2, d):
        i = self.at
        self.states[i], self.actions[i], self.rewards[i] = s, a, r
        self.next_states[i], self.dones[i] = s2, d
        self.at = (self.at + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def sample(self, n):
        idx = torch.randint(0, self.size, (n,))
        return (self.states[idx], self.actions[idx], self.rewards[idx], self.next_states[idx],
                self.dones[idx])


q_net = nn.Sequential(nn.Linear(25, 64), nn.ReLU(), nn.Linear(64, 4))
target_net = nn.Sequential(nn.Linear(25, 64), nn.ReLU(), nn.Linear(64, 4))
target_net.load_state_dict(q_net.state_dict())
target_net.eval()
opt = torch.optim.Adam(q_net.parameters(), lr=5e-3)
buffer = ReplayBuffer(500)
gamma, steps = 0.95, 0
for episode in range(30):
    pos = torch.tensor([0, 0])
    eps = max(0.05, 0.9 - episode * 0.03)
    ret, taken = 0.0, []
    for t in range(30):
        s = observe(pos)
        if torch.rand(()) < eps:
            a = int(torch.randint(0, 4, ()).item())
        else:
            with torch.no_grad():
                a = int(q_net(s).argmax().item())
        taken.append(a)
        pos, r, done = env_step(pos, a)
        buffer.push(s, a, r, observe(pos), done)
        ret += r
        steps += 1
        if buffer.size >= 32:
            s_b, a_b, r_b, s2_b, d_b = buffer.sample(32)
            q = q_net(s_b).gather(1, a_b.unsqueeze(1)).squeeze(1)
            with torch.no_grad():
                best = q_net(s2_b).argmax(1, keepdim=True)  # Double DQN: chosen online,
                nxt = target_net(s2_b).gather(1, best).squeeze(1)  # valued by the target
                y = r_b + gamma * nxt * (~d_b).float()
            loss = F.smooth_l1_loss(q, y)
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_value_(q_net.parameters(), 1.0)
            opt.step()
        if steps % 25 == 0:
            target_net.load_state_dict(q_net.state_dict())
        if done:
            break
    if episode % 5 == 4:
        print("eps", episode, round(eps, 2), "actions", taken[:8])
        print("episode", episode, f"return {ret:.2f}", f"loss {loss.item():.6f}", len(taken))

snapshot = copy.deepcopy(q_net)
with torch.no_grad():
    for p in q_net.parameters():
        p.add_(1.0)  # the snapshot is unaffected
    boards = torch.eye(25)
    values = snapshot(boards)
policy = values.argmax(1).view(SIZE, SIZE)
print("policy", policy.tolist())
print("values", [round(v, 4) for v in values.max(1).values[:6].tolist()])
print("snapshot differs", not torch.equal(snapshot[0].weight, q_net[0].weight))
