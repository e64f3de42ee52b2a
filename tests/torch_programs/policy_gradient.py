"""REINFORCE on a generated bandit-like grid task: actions drawn from
torch.distributions.Categorical, a Gaussian exploration term from Normal.rsample, returns
discounted and normalised, and the policy's loss and parameters printed."""
# same-source tolerance: 1e-4 1e-6
# same-source exact: ^rewards
import torch
import torch.nn as nn
import torch.optim as optim
from torch.distributions import Categorical, Normal

torch.manual_seed(123)
N_STATES, N_ACTIONS, GAMMA = 6, 3, 0.9
rewards_table = torch.randn(N_STATES, N_ACTIONS)
print("rewards", rewards_table[0].tolist())
policy = nn.Sequential(nn.Linear(N_STATES, 16), nn.Tanh(), nn.Linear(16, N_ACTIONS))
value_noise = nn.Parameter(torch.tensor([0.5]))
optimizer = optim.Adam(list(policy.parameters()) + [value_noise], lr=0.02)

for episode in range(25):
    state = torch.randint(0, N_STATES, (1,)).item()
    log_probs, rewards, actions = [], [], []
    for t in range(8):
        obs = torch.zeros(N_STATES)
        obs[state] = 1.0
        dist = Categorical(logits=policy(obs))
        action = dist.sample()
        log_probs.append(dist.log_prob(action))
        actions.append(action.item())
        jitter = Normal(torch.tensor([0.0]), value_noise.abs() + 0.1).rsample()
        rewards.append(rewards_table[state, action].item() + 0.1 * jitter.item())
        state = (state + action.item() + 1) % N_STATES
    returns, g = [], 0.0
    for r in reversed(rewards):
        g = r + GAMMA * g
        returns.insert(0, g)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + 1e-8)
    loss = -(torch.stack(log_probs) * returns).sum() + 0.01 * value_noise.pow(2).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if episode % 5 == 0:
        print(f"episode {episode} actions {actions} return {sum(rewards):.5f} "
              f"loss {loss.item():.5f}")
        print("entropy", round(dist.entropy().item(), 5))

with torch.no_grad():
    probs = torch.softmax(policy(torch.eye(N_STATES)), dim=1)
print("greedy actions", probs.argmax(1).tolist())
print("best actions  ", rewards_table.argmax(1).tolist())
print("noise scale", round(value_noise.item(), 5))
